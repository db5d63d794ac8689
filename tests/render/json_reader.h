// Test helper: a minimal JSON reader, enough to read Chrome traces back.
#pragma once

#include <cctype>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace pe::testing {

/// A parsed JSON value. Objects keep their keys sorted (duplicates are an error).
struct Json {
  enum class Type { Null, Bool, Number, String, Array, Object } type = Type::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  /// The member `key` of an object; throws when missing.
  const Json& at(const std::string& key) const {
    auto it = object.find(key);
    if (type != Type::Object || it == object.end()) throw std::runtime_error("no key " + key);
    return it->second;
  }
  bool has(const std::string& key) const { return object.count(key) > 0; }
};

namespace json_detail {

class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}
  Json document() {
    Json value = parse();
    space();
    if (pos_ != s_.size()) fail("trailing content");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(pos_));
  }
  void space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void expect(char c) {
    space();
    if (pos_ >= s_.size() || s_[pos_] != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }
  Json parse() {
    space();
    if (pos_ >= s_.size()) fail("unexpected end");
    Json v;
    const char c = s_[pos_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') {
      v.type = Json::Type::String;
      v.string = string();
    } else if (literal("true") || literal("false")) {
      v.type = Json::Type::Bool;
      v.boolean = s_[pos_ - 1] == 'e' && s_[pos_ - 2] == 'u';
    } else if (literal("null")) {
    } else {
      v.type = Json::Type::Number;
      v.number = number();
    }
    return v;
  }
  double number() {
    const std::size_t begin = pos_;
    while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) ||
                                std::string("+-.eE").find(s_[pos_]) != std::string::npos))
      ++pos_;
    if (begin == pos_) fail("expected a value");
    std::size_t used = 0;
    const double value = std::stod(s_.substr(begin, pos_ - begin), &used);
    if (used != pos_ - begin) fail("bad number");
    return value;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c == '\\') {
        if (pos_ >= s_.size()) fail("bad escape");
        c = s_[pos_++];
        if (c == 'u') {
          if (pos_ + 4 > s_.size()) fail("bad \\u escape");
          out += static_cast<char>(std::stoi(s_.substr(pos_, 4), nullptr, 16));
          pos_ += 4;
          continue;
        }
        const std::string from = "\"\\/bfnrt", to = "\"\\/\b\f\n\r\t";
        const auto k = from.find(c);
        if (k == std::string::npos) fail("bad escape");
        c = to[k];
      }
      out += c;
    }
    expect('"');
    return out;
  }
  Json array() {
    Json v;
    v.type = Json::Type::Array;
    expect('[');
    space();
    if (pos_ < s_.size() && s_[pos_] == ']') return ++pos_, v;
    for (;;) {
      v.array.push_back(parse());
      space();
      if (pos_ < s_.size() && s_[pos_] == ',') { ++pos_; continue; }
      expect(']');
      return v;
    }
  }
  Json object() {
    Json v;
    v.type = Json::Type::Object;
    expect('{');
    space();
    if (pos_ < s_.size() && s_[pos_] == '}') return ++pos_, v;
    for (;;) {
      space();
      const std::string key = string();
      expect(':');
      if (!v.object.emplace(key, parse()).second) fail("duplicate key " + key);
      space();
      if (pos_ < s_.size() && s_[pos_] == ',') { ++pos_; continue; }
      expect('}');
      return v;
    }
  }

  const std::string& s_;
  std::size_t pos_ = 0;
};

}  // namespace json_detail

/// Parses a whole JSON document; throws std::runtime_error when malformed.
inline Json parse_json(const std::string& text) { return json_detail::Reader(text).document(); }

}  // namespace pe::testing
