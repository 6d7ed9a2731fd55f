# Tests of the engine module.
