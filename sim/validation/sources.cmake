# Sources of the validation module.
