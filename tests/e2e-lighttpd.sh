#!/bin/sh
# Placeholder: replaced by the end-to-end suite through lighttpd.
echo "Bail out! not written yet"
exit 99
