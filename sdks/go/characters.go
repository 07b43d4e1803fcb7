package agentry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ImportCharacterFile imports the elizaOS character file at path: it reads the file, checks that it holds a
// JSON object, and sends it as [AgentService.ImportCharacter] does, as it is. A file that cannot be read or is
// not a JSON object is an error before anything is sent.
//
//	imported, err := client.Agents.ImportCharacterFile(ctx, "eliza.character.json", agentry.ImportCharacterParams{})
//	// A file naming a provider the server has no key for, answered by the server's default model instead:
//	imported, err = client.Agents.ImportCharacterFile(ctx, "eliza.character.json",
//		agentry.ImportCharacterParams{UseDefaultModel: agentry.Bool(true)})
func (s *AgentService) ImportCharacterFile(ctx context.Context, path string, params ImportCharacterParams, opts ...Option) (*CharacterImport, error) {
	character, err := readCharacterFile(path)
	if err != nil {
		return nil, err
	}
	return s.ImportCharacter(ctx, character, params, opts...)
}

// ImportCharacterFileDryRun checks the elizaOS character file at path as [AgentService.ImportCharacterDryRun]
// does: nothing is stored, and the answer is the agent it would create, with the warnings.
func (s *AgentService) ImportCharacterFileDryRun(ctx context.Context, path string, params ImportCharacterDryRunParams, opts ...Option) (*CharacterImportPreview, error) {
	character, err := readCharacterFile(path)
	if err != nil {
		return nil, err
	}
	return s.ImportCharacterDryRun(ctx, character, params, opts...)
}

// readCharacterFile reads a character file as the JSON object it must hold. Numbers stay json.Number, so the
// file is sent with its numbers as written.
func readCharacterFile(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("agentry: reading the character file: %w", err)
	}
	var character map[string]any
	if err := decodeJSONNumbers(data, &character); err != nil {
		return nil, fmt.Errorf("agentry: the character file %s is not a JSON object: %w", path, err)
	}
	if character == nil {
		return nil, fmt.Errorf("agentry: the character file %s is not a JSON object: it holds null", path)
	}
	return character, nil
}

// decodeJSONNumbers decodes one JSON value, its numbers as json.Number; anything after it is an error.
func decodeJSONNumbers(data []byte, out any) error {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	if err := decoder.Decode(out); err != nil {
		return err
	}
	if decoder.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}
