#!/usr/bin/env bash
# Writes the seed corpus of the fuzz targets from the project's own inputs:
#   corpus/scenario/      every shipped scenario (scenarios/, tests/*/data) with its model and
#                         hardware inlined (fuzz_support.hpp: "#%model", "#%hardware", "#%set"),
#                         every model and every hardware file in a small plan that simulates,
#                         the schedules, ZeRO, recompute, MoE and full-replay variants, and one
#                         seed per schema key with a set line giving the key its own value
#   corpus/measured_run/  one seed per run of tests/validation/calibration.yaml and trends.yaml
# Comments are dropped (the fuzzer gains nothing from them, and seeds stay small).
# Usage: make_corpus.sh [OUT_DIR]   (default: tests/fuzz/corpus, the committed corpus)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/corpus}"
mkdir -p "$out/scenario" "$out/measured_run"
rm -f "$out"/scenario/seed-* "$out"/measured_run/seed-*

# A YAML file without comments and blank lines ('#' inside quotes never occurs in these files
# before a comment, and a '#' that starts a comment is preceded by a space).
strip() { sed -e 's/[[:space:]]*#.*//' -e '/^[[:space:]]*$/d' "$1"; }

# Finds a model or hardware file the way the loader does: beside the scenario, then under
# the project's models/ or hardware/, each with .yaml appended when missing.
find_input() {  # name scenario_dir subdir
  local c
  for c in "$2/$1" "$root/$1" "$root/$3/$1"; do
    [ -f "$c" ] && { echo "$c"; return; }
    [ -f "$c.yaml" ] && { echo "$c.yaml"; return; }
  done
  return 0
}

# seed NAME SCENARIO_TEXT MODEL_FILE HARDWARE_FILE [SET_LINE...]
seed() {
  local name="$1" scenario="$2" model="$3" hardware="$4"
  shift 4
  {
    printf '%s\n' "$scenario"
    printf '#%%model\n'
    strip "$model"
    printf '#%%hardware\n'
    strip "$hardware"
    if [ $# -gt 0 ]; then
      printf '#%%set\n'
      printf '%s\n' "$@"
    fi
  } > "$out/scenario/seed-$name"
}

# The model is always called model.yaml in the scratch directory, config.json for HF configs.
model_ref() { case "$1" in *.json) echo config.json ;; *) echo model.yaml ;; esac; }

for file in "$root"/scenarios/*.yaml "$root"/tests/config/data/*.yaml; do
  dir="$(dirname "$file")"
  grep -q '^model:' "$file" || continue  # a model or hardware file (used below)
  model_name="$(sed -n 's/^model:[[:space:]]*//p' "$file" | sed 's/[[:space:]]*#.*//')"
  hardware_name="$(sed -n 's/^hardware:[[:space:]]*//p' "$file" | sed 's/[[:space:]]*#.*//')"
  model="$(find_input "$model_name" "$dir" models)"
  hardware="$(find_input "$hardware_name" "$dir" hardware)"
  [ -n "$model" ] && [ -n "$hardware" ] || continue
  text="$(strip "$file" | sed -e "s|^model:.*|model: $(model_ref "$model")|" -e 's|^hardware:.*|hardware: hardware.yaml|')"
  seed "scenario-$(basename "$file" .yaml)" "$text" "$model" "$hardware"
done

# A small plan every shipped model runs in (8 devices, PP2 DP4, 4 micro-batches): the
# fuzzer starts from inputs that reach the replay, not only the loader.
small_plan() {  # model_ref [extra plan lines]
  printf 'model: %s\nhardware: hardware.yaml\nnum_devices: 8\nplan:\n' "$1"
  printf '  pipeline_model_parallel_size: 2\n  global_batch_size: 16\n  seq_length: 2048\n'
  shift
  if [ $# -gt 0 ]; then printf '  %s\n' "$@"; fi
}
a100="$root/hardware/a100-80gb.yaml"
for model in "$root"/models/*.yaml; do
  seed "model-$(basename "$model" .yaml)" "$(small_plan model.yaml)" "$model" "$a100"
done
for model in "$root"/tests/config/data/*.json; do
  seed "hf-$(basename "$model" .json)" "$(small_plan config.json)" "$model" "$a100"
done
seed model-bad_model "$(small_plan model.yaml)" "$root/tests/config/data/bad_model.yaml" "$a100"
for hardware in "$root"/hardware/*.yaml "$root"/tests/explore/data/tiny-hbm.yaml "$root"/tests/config/data/bad_hardware.yaml; do
  seed "hardware-$(basename "$hardware" .yaml)" "$(small_plan model.yaml)" "$root/models/llama2-7b.yaml" "$hardware"
done

# Plan features, each on a model that allows it.
llama="$root/models/llama2-7b.yaml"
h100="$root/hardware/h100-80gb.yaml"
seed plan-gpipe "$(small_plan model.yaml 'schedule: gpipe')" "$llama" "$h100"
seed plan-interleaved "$(small_plan model.yaml 'schedule: interleaved' 'virtual_pipeline_model_parallel_size: 2')" "$llama" "$h100"
seed plan-zb-h1 "$(small_plan model.yaml 'schedule: zb-h1')" "$llama" "$h100"
seed plan-tp-sp "$(small_plan model.yaml 'tensor_model_parallel_size: 2' 'sequence_parallel: true' 'tp_comm_overlap: true')" "$llama" "$h100"
seed plan-cp "$(small_plan model.yaml 'context_parallel_size: 2')" "$llama" "$h100" 'plan.seq_length=8192'
seed plan-zero3 "$(small_plan model.yaml 'zero_stage: 3' 'overlap_param_gather: false' 'grad_bucket_size: 64MiB')" "$llama" "$h100"
seed plan-offload "$(small_plan model.yaml 'zero_stage: 2' 'offload_optimizer: true')" "$llama" "$h100"
seed plan-recompute "$(small_plan model.yaml 'recompute_granularity: full' 'recompute_method: block' 'recompute_num_layers: 4')" "$llama" "$h100"
seed plan-fp8 "$(small_plan model.yaml 'precision: fp8' 'use_distributed_optimizer: true')" "$llama" "$h100"
seed plan-layers-per-stage "$(small_plan model.yaml 'layers_per_stage: [15, 17]' 'rank_order: tp-cp-dp-pp')" "$llama" "$h100"
seed plan-collectives "$(small_plan model.yaml 'collective_algorithm: ring' 'collective_pipeline_tiers: true' 'collective_split_intra: true')" "$llama" "$root/hardware/ascend-910b3.yaml"
seed plan-moe-ep "$(small_plan model.yaml 'expert_model_parallel_size: 4')" "$root/models/mixtral-8x7b.yaml" "$h100"
seed plan-deepseek-ep "$(small_plan model.yaml 'expert_model_parallel_size: 2')" "$root/models/deepseek-v2-l4.yaml" "$root/hardware/b200.yaml"
seed plan-data-loading "$(small_plan model.yaml; printf 'data:\n  sample_load_time: 20ms\n  loader_workers: 0\n')" "$llama" "$h100"
seed plan-zb-h2 "$(small_plan model.yaml 'schedule: zb-h2')" "$llama" "$h100"
seed plan-zb-2p "$(small_plan model.yaml 'schedule: zb-2p')" "$llama" "$h100"
seed plan-zb-v "$(small_plan model.yaml 'schedule: zb-v')" "$llama" "$h100"
# Context-parallel traffic and attention kernels: each choice value once, so the fuzzer
# starts from every pricing branch (the key seeds below give only the default). The longer
# sequence is a set line: small_plan already writes seq_length, and a duplicate key is an error.
for comm in p2p all_gather a2a; do
  seed "plan-cp-$comm" "$(small_plan model.yaml 'context_parallel_size: 2' "cp_comm_type: $comm")" "$llama" "$h100" \
    'plan.seq_length=8192'
done
seed plan-cp-a2a-p2p "$(small_plan model.yaml 'context_parallel_size: 4' 'cp_comm_type: a2a+p2p' \
  'hierarchical_context_parallel_sizes: [2, 2]')" "$llama" "$h100" 'plan.seq_length=8192'
for kernel in auto flash2 flash3 cudnn eager; do
  seed "plan-attention-$kernel" "$(small_plan model.yaml "attention_kernel: $kernel")" "$llama" "$h100"
done
seed plan-attention-flash1 "$(small_plan model.yaml 'attention_kernel: flash1')" "$llama" "$a100"  # measured on A100 only
# Packed documents (data.document_lengths has no default, so no key seed gives it a value).
seed data-documents "$(small_plan model.yaml; printf 'data:\n  document_lengths: [512, 2048, 8192]\n  document_weights: [6, 3, 1]\n')" \
  "$llama" "$h100" 'plan.seq_length=8192'
# Slow cards in both forms (a count placed by the seed, a list of {rank, speed_factor}), and
# the speed spreads.
seed variability-slow-list "$(small_plan model.yaml; printf 'variability: {slow_devices: [{rank: 1, speed_factor: 0.5}]}\n')" "$llama" "$h100"
seed variability-slow-block "$(small_plan model.yaml; printf 'variability:\n  slow_devices:\n    - {rank: 0, speed_factor: 0.8}\n    - {rank: 7, speed_factor: 0.25}\n')" "$llama" "$h100"
seed variability-slow-count "$(small_plan model.yaml; printf 'variability:\n  slow_devices: 2\n  slow_card_speed: 0.5\n  seed: 7\n')" "$llama" "$h100"
seed variability-spread "$(small_plan model.yaml; printf 'variability:\n  slow_card_rate: 0.1\n  device_speed_cv: 0.08\n  step_jitter_cv: 0.02\n  seed: 3\n')" "$llama" "$h100"
# Unbalanced routing, dropless and with a capacity factor.
seed moe-imbalance "$(small_plan model.yaml 'expert_model_parallel_size: 4'; printf 'moe:\n  expert_load_cv: 0.5\n  expert_capacity_factor: 1.25\n')" "$root/models/mixtral-8x7b.yaml" "$h100"
seed set-overrides "$(small_plan model.yaml)" "$llama" "$h100" 'plan.micro_batch_size=2' 'plan.schedule=zb-h1' 'data.loader_workers=1'
seed set-new-keys "$(small_plan model.yaml)" "$llama" "$h100" 'plan.schedule=zb-v' 'plan.attention_kernel=flash3' \
  'variability.slow_devices=1' 'variability.device_speed_cv=0.05' 'plan.cp_comm_type=all_gather'
seed full-replay "$(small_plan model.yaml)" "$llama" "$h100" '!full'
seed full-replay-tp "$(small_plan model.yaml 'tensor_model_parallel_size: 2')" "$llama" "$a100" '!full' 'plan.sequence_parallel=true'

# One seed per key of the three schemas: the small plan with a single set line that gives
# the key its own value (from the file, else the schema's default). Mutating that short line
# reaches the key's whole range while everything else stays valid.
flatten() {  # file -> "a.b.c=value" for every scalar, the way the loader names keys
  strip "$1" | awk '
    { match($0, /^ */); depth = RLENGTH / 2; line = substr($0, RLENGTH + 1)
      key = line; sub(/:.*/, "", key); value = line; sub(/^[^:]*: */, "", value)
      path[depth] = key; full = key
      for (i = depth - 1; i >= 0; i--) full = path[i] "." full
      if (value != "") print full "=" value }'
}
schema_keys() {  # table name -> "path default" (default "-" when none)
  sed -n "/$1 = {/,/^};/p" "$root/sim/config/schema.cpp" |
    sed -n 's/^  {"\([a-z0-9_.]*\)", T::[a-z_]*, D::[a-z_]*, "\([^"]*\)".*/\1 \2/p' | sed 's/ $/ -/'
}
key_seeds() {  # table prefix file
  local table="$1" prefix="$2" file="$3" values path default value name
  values="$(flatten "$file")"
  schema_keys "$table" | while read -r path default; do
    value="$(printf '%s\n' "$values" | sed -n "s/^${path//./\\.}=//p" | head -1)"
    [ -z "$value" ] && [ "$default" != "-" ] && value="$default"
    case "$path" in name|source|description|model_type|model|hardware|device.name) continue ;; esac
    [ -n "$value" ] || continue
    name="${prefix:-scenario:}"
    seed "key-${name%:}-$path" "$(small_plan model.yaml)" "$llama" "$h100" "$prefix$path=$value"
  done
}
small_scenario="$(mktemp)"
small_plan model.yaml > "$small_scenario"
key_seeds kScenarioKeys "" "$small_scenario"
key_seeds kModelKeys model: "$llama"
key_seeds kHardwareKeys hardware: "$h100"
rm -f "$small_scenario"
seed key-model-moe "$(small_plan model.yaml 'expert_model_parallel_size: 2')" "$root/models/mixtral-8x7b.yaml" "$h100" \
  'model:num_local_experts=8' 'model:num_experts_per_tok=2' 'model:capacity_factor=1.0'

# Measured runs: one run per seed, its free-text fields cut to the phrases validation.cpp
# reads (so the seed keeps its meaning without kilobytes of prose).
for file in "$root"/tests/validation/calibration.yaml "$root"/tests/validation/trends.yaml; do
  awk -v dir="$out/measured_run" -v prefix="seed-$(basename "$file" .yaml)" '
    function flush() {
      if (n == 0) return
      keep = ""
      split("count activation recomputation|counts recompute|mc2|FP8 training|fp16", phrases, "|")
      for (i in phrases) if (index(prose, phrases[i])) keep = keep (keep == "" ? "" : "; ") phrases[i]
      if (keep != "") body = body "  notes: \"" keep "\"\n"
      printf "%s", body > (dir "/" prefix "-" sprintf("%03d", n))
      close(dir "/" prefix "-" sprintf("%03d", n))
    }
    /^- id:/ { flush(); n++; body = $0 "\n"; prose = ""; skipping = 0; next }
    n == 0 { next }
    /^  (source|notes):/ { skipping = 1; prose = prose " " $0; next }
    skipping && /^    / { prose = prose " " $0; next }
    { skipping = 0; if ($0 !~ /^[[:space:]]*#/) body = body $0 "\n" }
    END { flush() }
  ' "$file"
done
echo "corpus: $(ls "$out/scenario" | wc -l) scenario seeds, $(ls "$out/measured_run" | wc -l) measured-run seeds in $out"

# Dictionaries: the words the parsers look for, so mutations produce them whole.
# scenario.dict: every key of sim/config/schema.cpp (as a YAML key, and dotted as a set
# line: a --set override, or a model:/hardware: edit), the choice values, units with their
# prefixes, the harness markers, YAML syntax and numbers at the edges of int, int64, double.
schema="$root/sim/config/schema.cpp"
{
  echo '# Generated by make_corpus.sh from sim/config/schema.cpp and sim/common/units.cpp.'
  for marker in '\x0A#%model\x0A' '\x0A#%hardware\x0A' '\x0A#%set\x0A' '!full' 'model.yaml' 'hardware.yaml' 'config.json'; do
    printf '"%s"\n' "$marker"
  done
  # Leaf names as YAML keys; only scenario keys can be --set overrides.
  sed -n 's/^  {"\([a-z0-9_.]*\)", T::.*/\1/p' "$schema" | sed 's/.*\.//' | sort -u | sed 's/.*/"&: "/'
  sed -n '/kScenarioKeys = {/,/^};/s/^  {"\([a-z0-9_.]*\)", T::.*/"\1="/p' "$schema"
  sed -n '/kModelKeys = {/,/^};/s/^  {"\([a-z0-9_.]*\)", T::.*/"model:\1="/p' "$schema"
  sed -n '/kHardwareKeys = {/,/^};/s/^  {"\([a-z0-9_.]*\)", T::.*/"hardware:\1="/p' "$schema"
  # Choice values: the "a|b|c" strings of the tables.
  grep -o '"[a-z0-9_-]*\(|[a-z0-9_-]*\)\+"' "$schema" | tr -d '"' | tr '|' '\n' | sort -u | sed 's/.*/"&"/'
  # plan.schedule's choices: the names in the schedule table's entries.
  sed -n 's/^  e\.name = "\([a-z0-9_-]*\)";/"\1"/p' "$root/sim/schedule/schedule_table.cpp"
  for word in tp-cp-ep-dp-pp tp- cp- ep- dp- pp; do printf '"%s"\n' "$word"; done  # plan.rank_order
  for section in device: gemm: node: cluster: plan: data: variability: moe:; do printf '"%s\\x0A  "\n' "$section"; done
  # variability.slow_devices as a list: its entries' keys are read by the loader, not the table.
  for word in 'rank: ' 'speed_factor: ' '- {rank: 1, speed_factor: 0.5}'; do printf '"%s"\n' "$word"; done
  for unit in B b B/s Bps b/s bps s FLOPS FLOP/s flops W; do
    for prefix in "" Ki Mi Gi Ti Pi k K M G T P m u n p; do printf '"%s%s"\n' "$prefix" "$unit"; done
  done
  for edge in 0 -1 1 2 3 7 8 64 1024 65536 2147483647 2147483648 4294967296 9223372036854775807 \
              9223372036854775808 1e6 1e7 1e8 1e9 1e18 1e19 1e300 1e308 1e309 1e-300 5e-324 -0 0.0 \
              .inf -.inf .nan nan inf 0x10 1_000; do
    printf '"%s"\n' "$edge"
  done
  for syntax in ': ' '\x0A  ' '\x0A    ' '- ' '[' ']' '{' '}' ', ' '&a ' '*a' '!!str ' '!!int ' '<<: ' '---' '...' '~' 'null' \
                'true' 'false' '|' '>' "'" '\"'; do
    printf '"%s"\n' "$syntax"
  done
} > "$here/scenario.dict"

# measured_run.dict: the keys of sim/validation/measured_run.cpp and the words
# sim/validation/validation.cpp looks for in ids, accelerators, schedules and notes.
{
  echo '# Generated by make_corpus.sh from sim/validation/measured_run.cpp and validation.cpp.'
  grep -o '"[a-z_]*"' "$root/sim/validation/measured_run.cpp" | sort -u | sed '/^""$/d' |
    sed 's/"\(.*\)"/"\1: "/'
  for word in '- id: ' '\x0A  ' '\x0A    ' 'null' 'true' 'false' A100 H100 B200 910B 'NVIDIA A100 SXM 80GB' 'Ascend 910B3' \
              mcore- nemo narayanan21 korthikanti22 bigscience bmtrain fp8 'FP8 training' fp16 mc2 \
              'count activation recomputation' 'counts recompute' 1F1B 1F1B-I interleav gpipe ZB-1p ZB-H1 ZB-V \
              full selective block ' layer' 'full (block method, 1 layer per stage)' \
              0 -1 1 2 8 1024 2147483647 2147483648 9223372036854775807 1e300 1e-300 .inf .nan; do
    printf '"%s"\n' "$word"
  done
} > "$here/measured_run.dict"
echo "dictionaries: $(grep -vc '^#' "$here/scenario.dict") + $(grep -vc '^#' "$here/measured_run.dict") entries"
