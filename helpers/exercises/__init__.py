"""The check_... functions behind the notebooks' exercises. One module per topic."""
