# Sourced by the other scripts: the shared Dagster instance and a quiet console.
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/dagster_home}"
export GX_ANALYTICS_ENABLED="${GX_ANALYTICS_ENABLED:-false}" DAGSTER_DISABLE_TELEMETRY="${DAGSTER_DISABLE_TELEMETRY:-1}"
# Dagster's own warnings, filtered here because the project cannot fix them at their source:
# - `dagster asset materialize` and `dagster dev` are "superseded" by `dg launch --assets` and
#   `dg dev` in 1.13, but `dg launch` itself still calls the first; the README documents both
#   forms and keeps the `dagster` commands working.
# - observable_source_asset and backfill_policy are marked beta although Dagster 1.13 has no
#   stable replacement for either (a source asset with a data version; one run for a backfill).
# Each filter matches the start of one message (PYTHONWARNINGS takes literal prefixes), so any
# other warning, including new ones from Dagster, still shows.
_nurd_quiet="ignore:Function \`asset_materialize_command\` is superseded"
_nurd_quiet="$_nurd_quiet,ignore:Function \`dev_command\` is superseded"
_nurd_quiet="$_nurd_quiet,ignore:Function \`observable_source_asset\` is currently in beta"
_nurd_quiet="$_nurd_quiet,ignore:Parameter \`backfill_policy\` of function \`asset\` is currently in beta"
export PYTHONWARNINGS="${PYTHONWARNINGS:+$PYTHONWARNINGS,}$_nurd_quiet"
unset _nurd_quiet
