#include "profile_list.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"

namespace pe::cli {
namespace {

struct Row {
  std::string name;
  std::size_t states = 0;
  double profile_batch = 0;
  std::string file;  // relative to the profiles folder
};

std::vector<Row> rows() {
  const std::filesystem::path root = profiles_directory();
  std::vector<Row> rows;
  for (const ProfileEntry& e : bundled_profiles()) {
    const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
    rows.push_back({e.name, model.size(), e.profile_batch_size,
                    std::filesystem::path(e.path).lexically_relative(root).string()});
  }
  return rows;
}

// The profile batch as written in the catalogue: 32, 0.5.
std::string batch_text(double batch) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", batch);
  return text;
}

std::string table(const std::vector<Row>& rows) {
  std::size_t width = 4;
  for (const Row& r : rows) width = std::max(width, r.name.size());
  std::string text;
  auto line = [&](const std::string& name, const std::string& states, const std::string& batch,
                  const std::string& file) {
    char cells[64];
    std::snprintf(cells, sizeof cells, "%7s %6s  ", states.c_str(), batch.c_str());
    text += name + std::string(width - name.size() + 2, ' ') + cells + file + "\n";
  };
  line("name", "states", "pbs", "file");
  for (const Row& r : rows)
    line(r.name, std::to_string(r.states), batch_text(r.profile_batch), r.file);
  return text;
}

std::string csv(const std::vector<Row>& rows) {
  std::string text = "name,states,profile_batch_size,file\n";
  for (const Row& r : rows)
    text += r.name + "," + std::to_string(r.states) + "," + batch_text(r.profile_batch) + "," +
            r.file + "\n";
  return text;
}

std::string json(const std::vector<Row>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Row& r : rows)
    list.push_back({{"name", r.name},
                    {"states", r.states},
                    {"profile_batch_size", r.profile_batch},
                    {"file", r.file}});
  return nlohmann::ordered_json{{"profiles", list}}.dump(2) + "\n";
}

}  // namespace

std::string profile_list(Format format) {
  const std::vector<Row> all = rows();
  switch (format) {
    case Format::Csv:
      return csv(all);
    case Format::Json:
      return json(all);
    case Format::Table:
      break;
  }
  return table(all);
}

}  // namespace pe::cli
