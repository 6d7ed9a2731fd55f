# Sources of the graph module.
