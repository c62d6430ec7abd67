package wiring

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/principal"
)

// Environment variables of the authorization settings (docs/security.md).
const (
	// EnvAdmins lists the stack's admins: principal ARN patterns,
	// comma-separated (CDK context admins).
	EnvAdmins = "MAESTRO_ADMINS"
	// EnvPrivateWorkflows, "true", gives new workflows no readers beyond
	// their owners and operators (CDK context privateWorkflows).
	EnvPrivateWorkflows = "MAESTRO_PRIVATE_WORKFLOWS"
	// EnvSignalPrefixes limits announcing signals by name prefix: JSON
	// {"team": ["prefix", ...]} (CDK context signalPrefixes).
	EnvSignalPrefixes = "MAESTRO_SIGNAL_PREFIXES"
)

// AccessFromEnv reads the authorization settings of a deployed function:
// it always enforces (API Gateway authenticated the caller).
func AccessFromEnv() (orchestrator.AccessSettings, error) {
	return ParseAccess(true, envList(EnvAdmins), os.Getenv(EnvPrivateWorkflows) == "true", os.Getenv(EnvSignalPrefixes))
}

// ParseAccess checks and builds authorization settings: admins must be
// principal ARN patterns, signal prefixes a JSON object of team names to
// non-empty prefixes (blank text: none).
func ParseAccess(enforce bool, admins []string, private bool, prefixes string) (orchestrator.AccessSettings, error) {
	s := orchestrator.AccessSettings{Enforce: enforce, PrivateWorkflows: private}
	for _, a := range admins {
		if err := principal.ValidatePattern(a); err != nil {
			return s, fmt.Errorf("%s: %w", EnvAdmins, err)
		}
		s.Admins = append(s.Admins, a)
	}
	if strings.TrimSpace(prefixes) == "" {
		return s, nil
	}
	dec := json.NewDecoder(strings.NewReader(prefixes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s.SignalPrefixes); err != nil {
		return s, fmt.Errorf("%s: want a JSON object of team names to lists of prefixes: %w", EnvSignalPrefixes, err)
	}
	for team, ps := range s.SignalPrefixes {
		if err := access.CheckTeamName(team); err != nil {
			return s, fmt.Errorf("%s: %w", EnvSignalPrefixes, err)
		}
		for i, p := range ps {
			if strings.TrimSpace(p) == "" {
				return s, fmt.Errorf("%s: %s[%d]: a prefix must not be empty", EnvSignalPrefixes, team, i)
			}
		}
	}
	return s, nil
}
