# Tests of the memory module.
