"""`python -m nodeloom`: the command line, as the `nodeloom` script."""

from nodeloom.cli import main

if __name__ == "__main__":
    main()
