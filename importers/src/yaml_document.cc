// detail::yaml_input::parse: a first pass over the parser's events rejects duplicate mapping keys
// (yaml-cpp keeps both and lookups return the first) and finds empty nodes, whose marks
// yaml-cpp puts at the next token (often the next line); an empty node written after an
// indicator (`-`, `:`, `?`) gets an explicit `~` there, so its mark names its own line.
#include "yaml_input.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <map>
#include <set>
#include <sstream>
#include <string_view>

namespace pe::detail::yaml_input {
namespace {

constexpr std::size_t kNone = std::string::npos;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/// Where a comment starts in one line (its length when there is none). Quotes are
/// followed roughly: a '#' inside "..." or '...' does not start a comment.
std::size_t comment_start(std::string_view line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return i;
    }
  }
  return line.size();
}

/// The index just past the last character before `pos` that is neither blank nor part of
/// a comment; kNone when there is none.
std::size_t content_end_before(const std::string& text, std::size_t pos) {
  std::size_t end = std::min(pos, text.size());
  while (end > 0) {
    const std::size_t newline = text.rfind('\n', end - 1);
    const std::size_t start = newline == kNone ? 0 : newline + 1;
    std::string_view line(text.data() + start, end - start);
    line = line.substr(0, comment_start(line));
    const std::size_t last = line.find_last_not_of(" \t\r");
    if (last != std::string_view::npos) return start + last + 1;
    if (newline == kNone) return kNone;
    end = newline;
  }
  return kNone;
}

/// True when `text` at `pos` spells a null (`~`, `null`, `Null`, `NULL`) itself.
bool spelled_null(const std::string& text, std::size_t pos) {
  for (const std::string_view word : {"~", "null", "Null", "NULL"})
    if (std::string_view(text).substr(pos, word.size()) == word) return true;
  return false;
}

/// Where to write `~` for an empty node marked at `pos`: just after the indicator that
/// introduces it, when that is a block `-`, `?` or a `:`; else kNone.
std::size_t null_insertion_point(const std::string& text, std::size_t pos) {
  if (pos < text.size() && spelled_null(text, pos)) return kNone;
  const std::size_t end = content_end_before(text, pos);
  if (end == kNone) return kNone;
  const char indicator = text[end - 1];
  const bool alone = end == 1 || is_blank(text[end - 2]);
  const bool followed = end == text.size() || is_blank(text[end]);
  if (!followed) return kNone;
  if (indicator == ':' || ((indicator == '-' || indicator == '?') && alone)) return end;
  return kNone;
}

/// Collects the facts of the first pass: duplicate keys throw, empty nodes are noted, and
/// a document of more than `max_nodes` nodes throws at the first node past the limit,
/// before yaml-cpp builds its tree (a few hundred bytes a node).
class FirstPass : public YAML::EventHandler {
 public:
  FirstPass(const std::string& text, const std::string& file, std::size_t max_nodes)
      : text_(text), file_(file), max_nodes_(max_nodes) {}

  /// Indexes of `text` where a `~` makes an empty node explicit, in increasing order.
  const std::set<std::size_t>& insertions() const { return insertions_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    node(mark, nullptr);
    if (anchor != YAML::NullAnchor) return;
    const std::size_t at = null_insertion_point(text_, static_cast<std::size_t>(mark.pos));
    if (at != kNone) insertions_.insert(at);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, nullptr); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string& value) override {
    node(mark, &value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark, nullptr);
    frames_.push_back(Frame{false, 0, {}, {}});
  }
  void OnSequenceEnd() override { frames_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(mark, nullptr);
    frames_.push_back(Frame{true, 0, {}, {}});
  }
  void OnMapEnd() override { frames_.pop_back(); }

 private:
  struct Frame {
    bool is_map;
    std::size_t nodes;                 ///< Nodes seen so far (keys and values alternate).
    std::map<std::string, long> keys;  ///< Scalar keys and their 1-based lines.
    std::string last_key;              ///< The latest scalar key of a map.
  };

  /// Counts a node in its parent; a scalar key seen before in the same map throws.
  void node(const YAML::Mark& mark, const std::string* scalar) {
    const long line = mark.is_null() ? 0 : mark.line + 1;
    if (++nodes_ > max_nodes_)
      throw InputError(location(file_, line) + key_path(),
                       "more than " + std::to_string(max_nodes_) +
                           " YAML nodes (each key, value, list and map counts), expected a "
                           "smaller file");
    if (frames_.empty() || !frames_.back().is_map) return;
    Frame& map = frames_.back();
    if (map.nodes++ % 2 != 0 || scalar == nullptr) return;
    map.last_key = *scalar;
    const auto [first, fresh] = map.keys.emplace(*scalar, line);
    if (!fresh)
      throw InputError(location(file_, line), "duplicate key '" + *scalar + "' (first at line " +
                                                  std::to_string(first->second) + ")");
  }

  /// ": a.b.c", the keys under which the node being counted sits; "" at the top. In the
  /// innermost map the latest key counts only when the node is its value.
  std::string key_path() const {
    std::string path;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& frame = frames_[i];
      const bool at_value = i + 1 < frames_.size() || frame.nodes % 2 == 1;
      if (frame.is_map && at_value && !frame.last_key.empty())
        path += (path.empty() ? "" : ".") + frame.last_key;
    }
    return path.empty() ? "" : ": " + path;
  }

  const std::string& text_;
  const std::string& file_;
  std::size_t max_nodes_;
  std::size_t nodes_ = 0;
  std::vector<Frame> frames_;
  std::set<std::size_t> insertions_;
};

// Notes where a document starts and ignores the rest: used to find a second document.
class DocumentStart : public YAML::EventHandler {
 public:
  long line = 0;  ///< 1-based line of the document's first mark.

  void OnDocumentStart(const YAML::Mark& mark) override { line = mark.line + 1; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

InputError syntax_error(const YAML::Exception& e, const std::string& file) {
  return InputError(location(file, e.mark.is_null() ? 0 : e.mark.line + 1),
                    "YAML syntax error: " + e.msg);
}

/// `text` with " ~" written at each of `points`.
std::string with_nulls(const std::string& text, const std::set<std::size_t>& points) {
  std::string out;
  out.reserve(text.size() + 2 * points.size());
  std::size_t from = 0;
  for (const std::size_t at : points) {
    out.append(text, from, at - from);
    out += " ~";
    from = at;
  }
  out.append(text, from, kNone);
  return out;
}

}  // namespace

YAML::Node parse(const std::string& text, const std::string& file, std::size_t max_nodes) {
  std::istringstream stream(text);
  FirstPass pass(text, file, max_nodes);
  try {
    YAML::Parser parser(stream);
    parser.HandleNextDocument(pass);
    // A reader of the first document alone would drop the rest without a word.
    if (DocumentStart second; parser.HandleNextDocument(second))
      throw InputError(location(file, second.line),
                       "a second YAML document starts here, expected one document");
  } catch (const YAML::Exception& e) {
    throw syntax_error(e, file);
  }
  if (!pass.insertions().empty()) {
    try {
      return YAML::Load(with_nulls(text, pass.insertions()));
    } catch (const YAML::Exception&) {
      // The explicit nulls only move marks; fall back to the text as written.
    }
  }
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw syntax_error(e, file);
  }
}

}  // namespace pe::detail::yaml_input
