"""C, C++ and CUDA: tree-sitter parsing and the symbol graph of that half of a system."""
