#!/bin/sh
# emit.sh VARIANT WHAT — the "candidate" configs/lit's tests check: variant b gets the sum wrong.
case "$2" in
  greeting) echo "hello from variant $1" ;;
  sum) if [ "$1" = b ]; then echo "sum 2 + 2 = 5"; else echo "sum 2 + 2 = 4"; fi ;;
  list) printf 'first\nsecond\nthird\n' ;;
  *) echo "emit.sh: unknown '$2'" >&2; exit 2 ;;
esac
