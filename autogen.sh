#!/bin/sh
# SPDX-License-Identifier: MIT
# Generate ./configure from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf -fi
cp "$(automake --print-libdir)/tap-driver.sh" build-aux/tap-driver.sh
