#!/bin/sh
# Compiler launcher for checks that only need the compiler's front end
# (tests/headers): runs the compile command it is given with -fsyntax-only,
# which parses and instantiates everything but generates no code (about half
# the time), then leaves an empty file where the object file would be, so the
# build tool sees the step done. The depfile (-MD -MF) is still written.
out=""
prev=""
for arg in "$@"; do
  if [ "$prev" = "-o" ]; then out=$arg; fi
  prev=$arg
done
"$@" -fsyntax-only || exit $?
if [ -n "$out" ]; then : >"$out"; fi
