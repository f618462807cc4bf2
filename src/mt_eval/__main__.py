"""``python -m mt_eval`` runs the command line."""

from mt_eval.cli import main

main()
