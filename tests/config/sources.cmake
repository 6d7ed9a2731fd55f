# Tests of the config module.
