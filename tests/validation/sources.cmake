# Tests of the validation module.
