# Sourced by hooks/guard.sh and hooks/evidence.sh: a venv's one site-packages, handed to Python
# started without its `site` module (-S: ~1–2 ms less per call) and put after the standard
# library, as `site` would put it. With more than one (a leftover of another Python), or a venv
# that also sees the system's packages, none: Python starts with `site` and finds its own.
site_of() { # $1: the venv; into $site (no subshell)
  site=
  for found in "$1"/lib/python3*/site-packages; do
    [ -d "$found" ] || continue
    [ -z "$site" ] || { site=; return 0; }
    site=$found
  done
  if [ -n "$site" ] && [ -r "$1/pyvenv.cfg" ]; then
    while IFS= read -r line; do
      case $line in include-system-site-packages*true*) site= ;; esac
    done <"$1/pyvenv.cfg"
  fi
  return 0
}
