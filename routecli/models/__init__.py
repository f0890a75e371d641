"""Neural policies built from routecli.nn and routecli.envs."""
