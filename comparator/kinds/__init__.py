"""The comparator's evidence kinds, one package each; :mod:`comparator.registry` lists them."""
