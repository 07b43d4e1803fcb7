"""Checks what schema validation cannot see in deploy/: that the pieces refer to each other correctly (Service
selectors and ports, probes, Secret keys, image targets), that every pod is hardened and shuts down gracefully,
and that every environment variable the files set is one the services read.

    python policy.py --k8s RENDERED.yaml --secret secret.example.yaml --compose RESOLVED.yaml \
        --dockerfile Dockerfile --root REPOSITORY

Prints one line per check and exits 1 when any fails.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import yaml

Doc = dict[str, Any]

# The variables each service reads to bound its shutdown, in milliseconds.
SHUTDOWN_VARIABLES = ("SHUTDOWN_TIMEOUT_MS",)
HEALTHCHECK_SCRIPT = "deploy/docker/healthcheck.mjs"
# Variables of the images and tools around the services rather than of the services' own schemas.
NOT_SERVICE_VARIABLES = {"NODE_ENV"}
# Which components call each internal service's RPC port (README, "Running in production"). These services check
# no API key, so their NetworkPolicy must let exactly these reach the port, and nothing else.
RPC_CALLERS = {
    "registry": {"gateway", "conversation", "connectors"},
    "conversation": {"gateway", "registry", "connectors"},
    "webhooks": {"gateway", "registry", "conversation"},
    "connectors": {"gateway"},
}
RPC_PORT = "h2c"


def load_all(path: Path) -> list[Doc]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def pod_spec(doc: Doc) -> Doc:
    return doc["spec"]["template"]["spec"]


def containers(doc: Doc) -> list[Doc]:
    return pod_spec(doc)["containers"]


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def env_value(container: Doc, name: str) -> str | None:
    for entry in container.get("env", []):
        if entry["name"] == name and "value" in entry:
            return str(entry["value"])
    return None


def port_names(container: Doc) -> set[str]:
    return {port["name"] for port in container.get("ports", []) if "name" in port}


def port_numbers(container: Doc) -> set[int]:
    return {port["containerPort"] for port in container.get("ports", [])}


class Checks:
    def __init__(self, k8s: list[Doc], secret: Doc, compose: Doc, dockerfile: str, root: Path) -> None:
        self.k8s = k8s
        self.secret = secret
        self.compose = compose
        self.dockerfile = dockerfile
        self.root = root
        self.deployments = [doc for doc in k8s if doc["kind"] == "Deployment"]
        self.workloads = [doc for doc in k8s if doc["kind"] in ("Deployment", "Job")]

    def of_kind(self, kind: str) -> list[Doc]:
        return [doc for doc in self.k8s if doc["kind"] == kind]

    def selected(self, selector: dict[str, str]) -> list[Doc]:
        return [d for d in self.deployments if matches(selector, d["spec"]["template"]["metadata"]["labels"])]

    # --- Kubernetes -------------------------------------------------------------------------------------------

    def pods_are_hardened(self) -> Iterator[str]:
        for doc in self.workloads:
            name = f"{doc['kind']}/{doc['metadata']['name']}"
            spec = pod_spec(doc)
            security = spec.get("securityContext", {})
            if security.get("runAsNonRoot") is not True:
                yield f"{name}: runAsNonRoot is not true"
            if security.get("seccompProfile", {}).get("type") != "RuntimeDefault":
                yield f"{name}: seccompProfile is not RuntimeDefault"
            if spec.get("automountServiceAccountToken") is not False:
                yield f"{name}: the service account token is mounted"
            for container in containers(doc):
                own = container.get("securityContext", {})
                if own.get("allowPrivilegeEscalation") is not False:
                    yield f"{name}/{container['name']}: allowPrivilegeEscalation is not false"
                if own.get("readOnlyRootFilesystem") is not True:
                    yield f"{name}/{container['name']}: the root filesystem is writable"
                if own.get("capabilities", {}).get("drop") != ["ALL"]:
                    yield f"{name}/{container['name']}: capabilities are not all dropped"
                resources = container.get("resources", {})
                for kind in ("requests", "limits"):
                    for resource in ("cpu", "memory"):
                        if resource not in resources.get(kind, {}):
                            yield f"{name}/{container['name']}: no {resource} in resources.{kind}"

    def deployments_probe_and_drain(self) -> Iterator[str]:
        for doc in self.deployments:
            spec = pod_spec(doc)
            for container in containers(doc):
                name = f"Deployment/{doc['metadata']['name']}/{container['name']}"
                for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                    if probe not in container:
                        yield f"{name}: no {probe}"
                pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
                if len(pre_stop) != 2 or pre_stop[0] != "sleep":
                    yield f"{name}: no preStop sleep to let endpoints drain"
                    continue
                shutdown = [env_value(container, variable) for variable in SHUTDOWN_VARIABLES]
                shutdown_ms = next((int(value) for value in shutdown if value is not None), None)
                if shutdown_ms is None:
                    yield f"{name}: sets none of {', '.join(SHUTDOWN_VARIABLES)}"
                    continue
                needed = int(pre_stop[1]) + shutdown_ms / 1000
                grace = spec.get("terminationGracePeriodSeconds", 30)
                if grace <= needed:
                    yield f"{name}: terminationGracePeriodSeconds {grace} <= preStop + shutdown ({needed:g} s)"

    def probes_reach_the_service(self) -> Iterator[str]:
        script = self.root / HEALTHCHECK_SCRIPT
        for doc in self.deployments:
            for container in containers(doc):
                name = f"Deployment/{doc['metadata']['name']}/{container['name']}"
                for probe_name in ("startupProbe", "readinessProbe", "livenessProbe"):
                    probe = container.get(probe_name, {})
                    if "httpGet" in probe and probe["httpGet"]["port"] not in port_names(container):
                        yield f"{name}: {probe_name} uses port {probe['httpGet']['port']}, not a container port"
                    command = probe.get("exec", {}).get("command")
                    if command is None:
                        continue
                    if command[:2] != ["node", HEALTHCHECK_SCRIPT] or not script.is_file():
                        yield f"{name}: {probe_name} runs {command}, not the image's {HEALTHCHECK_SCRIPT}"
                        continue
                    url = re.fullmatch(r"(h2c|http)://127\.0\.0\.1:(\d+)(/\S*)", command[2])
                    if not url or int(url.group(2)) not in port_numbers(container):
                        yield f"{name}: {probe_name} asks {command[2]}, not a port of the container"

    def services_select_pods(self) -> Iterator[str]:
        for service in self.of_kind("Service"):
            name = f"Service/{service['metadata']['name']}"
            targets = self.selected(service["spec"]["selector"])
            if len(targets) != 1:
                yield f"{name}: selects {len(targets)} Deployments, expected 1"
                continue
            names = set().union(*(port_names(c) for c in containers(targets[0])))
            for port in service["spec"]["ports"]:
                if port["targetPort"] not in names:
                    yield f"{name}: targetPort {port['targetPort']} is not a port of {targets[0]['metadata']['name']}"

    def service_urls_resolve(self) -> Iterator[str]:
        services = {s["metadata"]["name"]: s for s in self.of_kind("Service")}
        for config in self.of_kind("ConfigMap"):
            for key, value in config["data"].items():
                url = re.fullmatch(r"http://([a-z0-9-]+):(\d+)", str(value))
                if not key.endswith("_URL") or not url:
                    continue
                service = services.get(url.group(1))
                if service is None:
                    yield f"ConfigMap/{config['metadata']['name']}: {key} names no Service {url.group(1)}"
                elif int(url.group(2)) not in {port["port"] for port in service["spec"]["ports"]}:
                    yield f"ConfigMap/{config['metadata']['name']}: {key} uses a port Service/{url.group(1)} lacks"

    def gateway_scales_and_stays_available(self) -> Iterator[str]:
        autoscalers = self.of_kind("HorizontalPodAutoscaler")
        if not any(hpa["spec"]["scaleTargetRef"]["name"] == "gateway" for hpa in autoscalers):
            yield "no HorizontalPodAutoscaler for the gateway"
        for hpa in autoscalers:
            target = hpa["spec"]["scaleTargetRef"]["name"]
            deployment = next((d for d in self.deployments if d["metadata"]["name"] == target), None)
            if deployment is None:
                yield f"HorizontalPodAutoscaler/{hpa['metadata']['name']}: no Deployment {target}"
            elif "replicas" in deployment["spec"]:
                yield f"Deployment/{target}: sets replicas, which every apply would reset under its autoscaler"
            if hpa["spec"].get("minReplicas", 1) < 2:
                yield f"HorizontalPodAutoscaler/{hpa['metadata']['name']}: minReplicas below 2"
        budgets = self.of_kind("PodDisruptionBudget")
        for budget in budgets:
            if len(self.selected(budget["spec"]["selector"]["matchLabels"])) != 1:
                yield f"PodDisruptionBudget/{budget['metadata']['name']}: does not select exactly one Deployment"
        if not any(self.selected(b["spec"]["selector"]["matchLabels"]) == self.selected({"app.kubernetes.io/component": "gateway"}) for b in budgets):
            yield "no PodDisruptionBudget for the gateway"

    def network_policies_select_pods(self) -> Iterator[str]:
        for policy in self.of_kind("NetworkPolicy"):
            name = f"NetworkPolicy/{policy['metadata']['name']}"
            targets = self.selected(policy["spec"]["podSelector"]["matchLabels"])
            if len(targets) != 1:
                yield f"{name}: applies to {len(targets)} Deployments, expected 1"
                continue
            names = set().union(*(port_names(c) for c in containers(targets[0])))
            for rule in policy["spec"].get("ingress", []):
                for peer in rule.get("from", []):
                    if not self.selected(peer["podSelector"]["matchLabels"]):
                        yield f"{name}: a peer selector matches no pods"
                for port in rule.get("ports", []):
                    if port["port"] not in names:
                        yield f"{name}: port {port['port']} is not a port of the pods it applies to"

    def rpc_ports_admit_only_their_callers(self) -> Iterator[str]:
        policies = self.of_kind("NetworkPolicy")
        for doc in self.deployments:
            if not any(RPC_PORT in port_names(c) for c in containers(doc)):
                continue
            labels = doc["spec"]["template"]["metadata"]["labels"]
            component = labels.get("app.kubernetes.io/component")
            name = f"Deployment/{doc['metadata']['name']}"
            if component not in RPC_CALLERS:
                yield f"{name}: serves RPCs, but RPC_CALLERS does not say who may call it"
                continue
            selecting = [p for p in policies if matches(p["spec"]["podSelector"]["matchLabels"], labels)]
            if len(selecting) != 1:
                yield f"{name}: {len(selecting)} NetworkPolicies select its pods, expected 1"
                continue
            admitted: set[str] = set()
            for rule in selecting[0]["spec"].get("ingress", []):
                ports = {port["port"] for port in rule.get("ports", [])}
                if ports and RPC_PORT not in ports:
                    continue
                if "from" not in rule:
                    yield f"{name}: an ingress rule opens port {RPC_PORT} to every pod"
                    continue
                for peer in rule["from"]:
                    selector = peer.get("podSelector", {}).get("matchLabels", {})
                    if set(peer) != {"podSelector"} or "app.kubernetes.io/component" not in selector:
                        yield f"{name}: an ingress peer of port {RPC_PORT} is not one Agentry component"
                        continue
                    admitted.add(selector["app.kubernetes.io/component"])
            if admitted != RPC_CALLERS[component]:
                yield f"{name}: port {RPC_PORT} admits {sorted(admitted)}, expected {sorted(RPC_CALLERS[component])}"

    def configuration_exists(self) -> Iterator[str]:
        maps = {c["metadata"]["name"] for c in self.of_kind("ConfigMap")}
        secret_name = self.secret["metadata"]["name"]
        secret_keys = set(self.secret["stringData"])
        for doc in self.workloads:
            for container in containers(doc):
                name = f"{doc['kind']}/{doc['metadata']['name']}/{container['name']}"
                for source in container.get("envFrom", []):
                    if "configMapRef" in source and source["configMapRef"]["name"] not in maps:
                        yield f"{name}: no ConfigMap {source['configMapRef']['name']}"
                for entry in container.get("env", []):
                    ref = entry.get("valueFrom", {}).get("secretKeyRef")
                    if ref and (ref["name"] != secret_name or ref["key"] not in secret_keys):
                        yield f"{name}: {entry['name']} refers to {ref['name']}/{ref['key']}, not in the Secret"

    def secret_holds_placeholders(self) -> Iterator[str]:
        for key, value in self.secret["stringData"].items():
            if value and "CHANGE-ME" not in value:
                yield f"Secret/{self.secret['metadata']['name']}: {key} is not a placeholder"

    # --- Images -----------------------------------------------------------------------------------------------

    def images_are_dockerfile_targets(self) -> Iterator[str]:
        targets = set(re.findall(r"^FROM\s+\S+\s+AS\s+(\S+)", self.dockerfile, re.MULTILINE | re.IGNORECASE))
        for doc in self.workloads:
            for container in containers(doc):
                image = container["image"].split(":")[0]
                if image.split("/")[-1] not in targets:
                    yield f"{doc['kind']}/{doc['metadata']['name']}: image {image} is no Dockerfile target"
        for name, service in self.agentry_services():
            target = service["build"].get("target")
            if target not in targets:
                yield f"compose service {name}: build target {target} is no Dockerfile target"

    # --- Compose ----------------------------------------------------------------------------------------------

    def agentry_services(self) -> list[tuple[str, Doc]]:
        return [(name, s) for name, s in self.compose["services"].items() if "build" in s]

    def compose_services_wait_and_drain(self) -> Iterator[str]:
        for name, service in self.agentry_services():
            depends = service.get("depends_on", {})
            if name == "migrate":
                if depends.get("postgres", {}).get("condition") != "service_healthy":
                    yield "compose service migrate: does not wait for a healthy Postgres"
                continue
            if "healthcheck" not in service:
                yield f"compose service {name}: no healthcheck"
            if service.get("read_only") is not True or service.get("cap_drop") != ["ALL"]:
                yield f"compose service {name}: not read-only with every capability dropped"
            uses_database = "DATABASE_URL" in service.get("environment", {})
            if uses_database and depends.get("migrate", {}).get("condition") != "service_completed_successfully":
                yield f"compose service {name}: starts before the migrations have completed"
        migrate = self.compose["services"].get("migrate")
        if migrate is None or migrate.get("restart") != "no":
            yield "compose: no migrations job that runs once"

    def compose_load_balancer_fronts_every_gateway(self) -> Iterator[str]:
        gateways = [name for name, s in self.agentry_services() if s["build"].get("target") == "gateway"]
        if len(gateways) < 2:
            yield f"compose: {len(gateways)} gateway(s), expected at least 2"
        caddyfile = (self.root / "deploy/caddy/Caddyfile").read_text()
        upstreams = set(re.findall(r"\b([a-z0-9-]+):8080\b", caddyfile))
        if upstreams != set(gateways):
            yield f"Caddyfile: proxies to {sorted(upstreams)}, compose runs gateways {sorted(gateways)}"

    # --- Both -------------------------------------------------------------------------------------------------

    def variables_are_read_by_the_services(self) -> Iterator[str]:
        sources = "\n".join(
            path.read_text()
            for pattern in ("services/*/src/**/*.ts", "packages/*/src/**/*.ts", "apps/*/src/**/*.ts")
            for path in self.root.glob(pattern)
            if not path.name.endswith(".test.ts") and "/src/gen/" not in str(path)
        )
        known = {name for name in re.findall(r"\b([A-Z][A-Z0-9_]{2,})\b", sources)}
        names: dict[str, str] = {}
        for config in self.of_kind("ConfigMap"):
            names.update({key: f"ConfigMap/{config['metadata']['name']}" for key in config["data"]})
        names.update({key: f"Secret/{self.secret['metadata']['name']}" for key in self.secret["stringData"]})
        for doc in self.workloads:
            for container in containers(doc):
                names.update({e["name"]: f"{doc['kind']}/{doc['metadata']['name']}" for e in container.get("env", [])})
        for name, service in self.agentry_services():
            names.update({key: f"compose service {name}" for key in service.get("environment", {})})
        example = (self.root / "deploy/conversation.env.example").read_text()
        names.update({key: "conversation.env.example" for key in re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", example, re.M)})
        for variable, where in sorted(names.items()):
            if variable not in known and variable not in NOT_SERVICE_VARIABLES:
                yield f"{where}: sets {variable}, which no service reads"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k8s", type=Path, required=True, help="kustomize build output")
    parser.add_argument("--secret", type=Path, required=True, help="the Secret's example manifest")
    parser.add_argument("--compose", type=Path, required=True, help="the resolved compose project (YAML)")
    parser.add_argument("--dockerfile", type=Path, required=True)
    parser.add_argument("--root", type=Path, required=True, help="the repository")
    args = parser.parse_args()

    checks = Checks(
        k8s=load_all(args.k8s),
        secret=load_all(args.secret)[0],
        compose=yaml.safe_load(args.compose.read_text()),
        dockerfile=args.dockerfile.read_text(),
        root=args.root,
    )
    suite: list[Callable[[], Iterator[str]]] = [
        checks.pods_are_hardened,
        checks.deployments_probe_and_drain,
        checks.probes_reach_the_service,
        checks.services_select_pods,
        checks.service_urls_resolve,
        checks.gateway_scales_and_stays_available,
        checks.network_policies_select_pods,
        checks.rpc_ports_admit_only_their_callers,
        checks.configuration_exists,
        checks.secret_holds_placeholders,
        checks.images_are_dockerfile_targets,
        checks.compose_services_wait_and_drain,
        checks.compose_load_balancer_fronts_every_gateway,
        checks.variables_are_read_by_the_services,
    ]
    failed = 0
    for check in suite:
        problems = list(check())
        print(f"{'FAIL' if problems else 'ok  '} policy: {check.__name__.replace('_', ' ')}")
        for problem in problems:
            print(f"       {problem}")
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
