// Test helper: a small well-formedness checker for the SVG the renderers write.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace pe::testing {

/// What check_xml found: the root element, its attributes, how often each element occurs
/// and the text content of every element of interest. `error` is empty when well-formed.
struct XmlSummary {
  std::string error;
  std::string root;
  std::map<std::string, std::string> root_attributes;
  std::map<std::string, int> element_counts;
  std::vector<std::string> texts;  ///< Unescaped content of <text> elements, in order.
};

namespace xml_detail {

inline bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' ||
         c == '.';
}

// Replaces the five predefined entities and numeric references; false on a bad one.
inline bool unescape(const std::string& raw, std::string& out) {
  static const std::map<std::string, std::string> named = {
      {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '<') return false;
    if (raw[i] != '&') {
      out += raw[i];
      continue;
    }
    const auto semi = raw.find(';', i);
    if (semi == std::string::npos) return false;
    const std::string entity = raw.substr(i + 1, semi - i - 1);
    if (named.count(entity))
      out += named.at(entity);
    else if (entity.size() > 1 && entity[0] == '#')
      out += '?';
    else
      return false;
    i = semi;
  }
  return true;
}

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  XmlSummary run() {
    skip_prolog();
    if (!element(true) && summary_.error.empty()) summary_.error = "no root element";
    skip_space();
    if (summary_.error.empty() && pos_ != s_.size()) summary_.error = "content after the root";
    return summary_;
  }

 private:
  bool fail(const std::string& what) {
    if (summary_.error.empty()) summary_.error = what + " at offset " + std::to_string(pos_);
    return false;
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool starts(const char* prefix) const {
    return s_.compare(pos_, std::strlen(prefix), prefix) == 0;
  }
  void skip_prolog() {
    for (skip_space(); starts("<?") || starts("<!--"); skip_space()) {
      const auto end = s_.find(starts("<?") ? "?>" : "-->", pos_);
      pos_ = end == std::string::npos ? s_.size() : end + (starts("<?") ? 2 : 3);
    }
  }
  std::string name() {
    const std::size_t begin = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
    return s_.substr(begin, pos_ - begin);
  }
  bool attributes(std::map<std::string, std::string>& into) {
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) return fail("unterminated tag");
      if (s_[pos_] == '>' || s_[pos_] == '/') return true;
      const std::string key = name();
      if (key.empty()) return fail("bad attribute name");
      skip_space();
      if (pos_ + 1 >= s_.size() || s_[pos_] != '=') return fail("attribute without '='");
      ++pos_;
      skip_space();
      const char quote = s_[pos_];
      if (quote != '"' && quote != '\'') return fail("unquoted attribute " + key);
      const auto end = s_.find(quote, pos_ + 1);
      if (end == std::string::npos) return fail("unterminated attribute " + key);
      std::string value;
      if (!unescape(s_.substr(pos_ + 1, end - pos_ - 1), value))
        return fail("bad entity in " + key);
      if (!into.emplace(key, value).second) return fail("duplicate attribute " + key);
      pos_ = end + 1;
    }
  }
  bool content(const std::string& tag) {
    std::string text;
    for (;;) {
      const auto lt = s_.find('<', pos_);
      if (lt == std::string::npos) return fail("unclosed <" + tag + ">");
      if (!unescape(s_.substr(pos_, lt - pos_), text)) return fail("bad character data");
      pos_ = lt;
      if (starts("</")) {
        pos_ += 2;
        if (name() != tag) return fail("mismatched </...> for <" + tag + ">");
        skip_space();
        if (pos_ >= s_.size() || s_[pos_] != '>') return fail("bad end tag");
        ++pos_;
        if (tag == "text") summary_.texts.push_back(text);
        return true;
      }
      if (!element(false)) return false;
    }
  }
  bool element(bool root) {
    if (pos_ >= s_.size() || s_[pos_] != '<') return false;
    ++pos_;
    const std::string tag = name();
    if (tag.empty()) return fail("bad element name");
    std::map<std::string, std::string> attrs;
    if (!attributes(attrs)) return false;
    ++summary_.element_counts[tag];
    if (root) {
      summary_.root = tag;
      summary_.root_attributes = attrs;
    }
    if (s_[pos_] == '/') {
      if (pos_ + 1 >= s_.size() || s_[pos_ + 1] != '>') return fail("bad empty-element tag");
      pos_ += 2;
      return true;
    }
    ++pos_;
    return content(tag);
  }

  const std::string& s_;
  std::size_t pos_ = 0;
  XmlSummary summary_;
};

}  // namespace xml_detail

/// Checks that `text` is one well-formed XML document (prolog, one root element).
inline XmlSummary check_xml(const std::string& text) { return xml_detail::Parser(text).run(); }

/// Whether some <text> element of `xml` holds exactly `text`.
inline bool has_text(const XmlSummary& xml, const std::string& text) {
  return std::find(xml.texts.begin(), xml.texts.end(), text) != xml.texts.end();
}

}  // namespace pe::testing
