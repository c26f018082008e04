#!/bin/sh
# Container entrypoint for the outboxer relay (docs/cli.md, "Running the relay as a daemon").
#
# `exec` replaces this shell with the relay: the relay itself receives the SIGTERM of `docker stop` or of
# Kubernetes, finishes its in-flight batch and exits 0. Without `exec`, the shell gets the signal and the
# relay does not; started through `npx` or `npm run`, npm does not pass it on either, and the relay is
# killed mid-batch when the grace period ends.
#
# Run from the application's directory (the one holding node_modules). Configure the relay with OUTBOXER_*
# variables (OUTBOXER_DATABASE_URL, OUTBOXER_PUBLISHER, OUTBOXER_BROKER_URL, ...) or with arguments,
# which are passed on: relay-entrypoint.sh --publisher nats
set -eu
exec node_modules/.bin/outboxer relay "$@"
