#!/usr/bin/env bash
# Issue #17's compose test, against the stack of compose.yaml (a 3-node NATS cluster, vcsim,
# two gateways behind one port, two replicas of every service), talking to it only through
# its published 127.0.0.1 ports: build the image from the local binary (nothing is
# pulled), bring the stack up and see that no container runs as root, apply the seed's
# vm-example and see it PoweredOn, kill one NATS node, one gateway and one replica of each
# service, create 20 more VMs, and check that all 21 are PoweredOn and that vcsim holds
# each exactly once. The stack is torn down (down -v) whatever happens (unless
# VMOP_SMOKE_KEEP is set); on failure the VMs' state and the logs of the containers that
# failed are printed.
set -euo pipefail
cd "$(dirname "$0")/../.."

project=${VMOP_SMOKE_PROJECT:-vmop-smoke}
file=deploy/compose/compose.yaml
work=$(mktemp -d)
export KUBECONFIG=$work/kubeconfig

say() { printf '%s smoke: %s\n' "$(date -u +%T)" "$*"; }
fail() { say "FAIL: $*"; exit 1; }

if docker compose version >/dev/null 2>&1; then
  compose() { docker compose -p "$project" -f "$file" "$@"; }
  up_flags=(--pull never)
elif command -v docker-compose >/dev/null; then
  compose() { docker-compose -p "$project" -f "$file" "$@"; }
  up_flags=()
else
  fail "neither docker compose nor docker-compose is installed"
fi

# free_port echoes the first port from $1 on that nothing on loopback listens on.
free_port() {
  local p=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}
export VMOP_API_PORT=${VMOP_API_PORT:-$(free_port 18080)}
export VMOP_VCSIM_PORT=${VMOP_VCSIM_PORT:-$(free_port 18989)}
export VMOP_NATS_PORT_1=${VMOP_NATS_PORT_1:-$(free_port 14222)}
export VMOP_NATS_PORT_2=${VMOP_NATS_PORT_2:-$(free_port $((VMOP_NATS_PORT_1 + 1)))}
export VMOP_NATS_PORT_3=${VMOP_NATS_PORT_3:-$(free_port $((VMOP_NATS_PORT_2 + 1)))}

# wait_for DESCRIPTION SECONDS COMMAND...: poll COMMAND until it succeeds, failing after
# SECONDS.
wait_for() {
  local what=$1 deadline=$((SECONDS + $2))
  shift 2
  until "$@"; do
    ((SECONDS < deadline)) || fail "$what: not within the deadline"
    sleep 2
  done
}

killed=()
teardown() {
  local code=$?
  set +e # report and tear down whatever fails here
  if ((code != 0)); then
    if [[ -s $KUBECONFIG ]]; then
      say "the VMs as the API reports them:"
      kubectl get vm -o wide 2>&1 | sed 's/^/    /' || true
      kubectl get vm -o jsonpath='{range .items[*]}{.metadata.name}{": "}{range .status.conditions[*]}{.type}={.status}({.reason}) {end}{"\n"}{end}' 2>&1 | sed 's/^/    /' || true
    fi
    for id in $(compose ps -q 2>/dev/null); do
      [[ " ${killed[*]} " == *" $id "* ]] && continue
      local state
      state=$(docker inspect -f '{{.Name}} {{.State.Status}} {{.State.ExitCode}} {{if .State.Health}}{{.State.Health.Status}}{{end}}' "$id")
      case $state in
      *" running 0 healthy" | *" exited 0 "*) ;; # nats-init ends with 0
      *)
        say "container ${state}; its log:"
        docker logs --tail 80 "$id" 2>&1 | sed 's/^/    /'
        ;;
      esac
    done
    say "warnings and errors of every container:"
    for id in $(compose ps -q 2>/dev/null); do
      docker logs "$id" 2>&1 | grep -E 'level=(WARN|ERROR)' | tail -n 15 | sed "s|^|    $(docker inspect -f '{{.Name}}' "$id") |"
    done
  fi
  if [[ -n ${VMOP_SMOKE_KEEP:-} ]]; then
    say "left running (VMOP_SMOKE_KEEP): docker-compose -p $project -f $file down -v"
    exit "$code"
  fi
  say "tearing down"
  # The image too: the next run builds it again, and would leave this one dangling.
  compose down -v --remove-orphans --rmi all >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$code"
}
trap teardown EXIT

start=$SECONDS
say "building the static binary and the image (nothing is pulled)"
make compose-binary >/dev/null
go build -o "$work/vcvms" ./stack/vcvms
# The one image every service runs.
compose build nats-init >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "building the image"; }

say "starting the stack (API on 127.0.0.1:$VMOP_API_PORT, vcsim on 127.0.0.1:$VMOP_VCSIM_PORT)"
all_healthy() {
  local ids n=0
  ids=$(compose ps -q) || return 1
  for id in $ids; do
    case $(docker inspect -f '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}' "$id") in
    "running healthy") n=$((n + 1)) ;;
    "exited ") ;; # nats-init, done (the nodes depend on its success)
    *) return 1 ;;
    esac
  done
  # 3 NATS nodes, vcsim, the balancer, 2 gateways, 2 replicas of 5 services.
  ((n == 17))
}
# compose up gives up at a dependency that is unhealthy at that moment: a part whose start
# met the cluster still busy (a consumer not created in time) exits, and is restarted. Bring
# up what is missing again until every container is healthy.
up_and_healthy() {
  all_healthy || { compose up -d --no-build "${up_flags[@]}" >/dev/null 2>&1 && all_healthy; }
}
wait_for "every container healthy" 420 up_and_healthy
say "up and healthy: $(compose ps -q | wc -l) containers"
for id in $(compose ps -q); do # none runs as root (the image's user)
  if [[ $(docker inspect -f '{{.State.Status}}' "$id") == running ]]; then
    uids=$(docker top "$id" -o pid,uid | awk 'NR > 1 {print $2}')
    [[ -n $uids && ! $uids =~ (^|[[:space:]])0($|[[:space:]]) ]] ||
      fail "$(docker inspect -f '{{.Name}}' "$id") runs as root (uids: ${uids:-none})"
  fi
done

docker cp "$(compose ps -q api-1)":/data/kubeconfig "$KUBECONFIG" >/dev/null
docker cp "$(compose ps -q vcsim)":/data/vcsim/tls.crt "$work/vcsim.crt" >/dev/null
kubectl config set-cluster "$(kubectl config view -o jsonpath='{.clusters[0].name}')" \
  --server "https://127.0.0.1:$VMOP_API_PORT" >/dev/null
vcvms() { "$work/vcvms" -url "https://127.0.0.1:$VMOP_VCSIM_PORT/sdk" -ca "$work/vcsim.crt"; }
vms_before=$(vcvms | wc -l)

vm_example=pkg/model/testdata/seed/vm-example.yaml
say "applying vm-example"
apply_example() { kubectl apply -f "$vm_example" >/dev/null; }
wait_for "kubectl apply vm-example" 60 apply_example
names=(my-vm)
powered_on() {
  local on
  on=$(kubectl get vm -o jsonpath='{range .items[*]}{.metadata.name}={.status.powerState}{"\n"}{end}') || return 1
  for n in "${names[@]}"; do
    grep -qx "$n=PoweredOn" <<<"$on" || return 1
  done
}
wait_for "vm-example PoweredOn" 180 powered_on
say "my-vm is PoweredOn"

say "killing one NATS node, one gateway and one replica of each service"
for s in nats-2 api-2 placement power storage network crypto; do
  mapfile -t ids < <(compose ps -q "$s")
  id=${ids[0]:-}
  [[ -n $id ]] || fail "no container of $s to kill"
  docker kill "$id" >/dev/null
  killed+=("$id")
done

more=$work/more.yaml
for i in $(seq -w 1 20); do
  names+=("smoke-$i")
  sed "s/^  name: my-vm$/  name: smoke-$i/" "$vm_example"
  echo ---
done >"$more"
say "creating 20 more VMs"
apply_more() { kubectl apply -f "$more" >/dev/null; } # a write meeting NATS's election is tried again
wait_for "kubectl apply of 20 VMs" 120 apply_more
wait_for "all 21 VMs PoweredOn" 420 powered_on
say "all 21 VMs are PoweredOn"

in_api=$(kubectl get vm -o name | wc -l)
((in_api == 21)) || fail "the API lists $in_api VMs, want 21"
in_vcsim=$(vcvms)
new=$(($(wc -l <<<"$in_vcsim") - vms_before))
((new == 21)) || fail "vcsim has $new new VMs, want 21"
for n in "${names[@]}"; do
  c=$(grep -cx "$n" <<<"$in_vcsim" || true)
  ((c == 1)) || fail "vcsim has $c VMs named $n, want 1"
done
say "PASS: 21 VMs PoweredOn, each exactly once in vcsim ($((SECONDS - start)) s)"
