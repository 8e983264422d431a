"""``python -m assay``: the same command line as the ``assay`` script (a checkout on ``PYTHONPATH``, a venv
whose scripts are not on ``PATH``)."""

from .cli import main

if __name__ == "__main__":
    main()
