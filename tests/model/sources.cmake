# Tests of the model module.
