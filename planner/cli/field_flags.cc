#include "field_flags.h"

#include <map>
#include <utility>

namespace pe::cli {

std::string flag_for_field(const std::string& field) {
  static const std::map<std::string, std::string> flags{
      {"TrainingSettings::min_micro_batch", "--mbs"},
      {"TrainingSettings::optimizer_scaling", "--optimizer-scaling"},
      {"TrainingSettings::activation_bytes_per_sample", "--activation-bytes-per-sample"},
      {"TrainingSettings::max_tensor_parallel", "--tensor-parallel"},
      {"TrainingSettings::tensor_parallel_efficiency", "--tp-efficiency"},
      {"TrainingSettings::zero_stage", "--zero"},
      {"SearchOptions::top", "--top"},
      {"SearchOptions::effort", "--search-effort"},
      {"SearchOptions::max_stage_width", "--max-stage-width"},
      {"SearchOptions::max_pipeline_copies", "--max-copies"},
      {"SearchOptions::max_chunks", "--max-chunks"},
      {"parse_batch_sizes", "--gbs"},
      {"parse_machine_ends", "--devices"},
      {"cluster_from_machine_ends", "--devices"},
      {"parse_stage_layout", "--plan"},
      {"PlanLayout::stages", "--plan"},
      {"PlanLayout::micro_batches", "--microbatches"},
      {"PlanLayout::pipeline_replicas", "--plan-copies"},
      {"PlanLayout::first_device", "--plan-first-device"},
      {"PlanLayout::copy_stride", "--plan-copy-stride"},
  };
  const auto it = flags.find(field);
  return it == flags.end() ? "" : it->second;
}

namespace {

// Every mention of `from` in `text` replaced by `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace

std::string cli_wording(std::string text) {
  // Phrases first: they name a field with a value that is not the flag's.
  static const std::pair<const char*, const char*> phrases[] = {
      {"SearchOptions::schedules with Schedule::OneFOneB", "--schedule 1f1b or best"},
  };
  for (const auto& [from, to] : phrases) text = replace_all(std::move(text), from, to);
  for (const char* field : {"TrainingSettings::min_micro_batch", "SearchOptions::effort",
                            "SearchOptions::max_stage_width", "SearchOptions::max_pipeline_copies"})
    text = replace_all(std::move(text), field, flag_for_field(field));
  return text;
}

std::string usage_message(const UsageError& error) {
  const std::string& field = error.field();
  const std::string flag = flag_for_field(field);
  if (field.empty() || flag.empty()) return error.what();
  return replace_all(error.what(), field, flag);
}

}  // namespace pe::cli
