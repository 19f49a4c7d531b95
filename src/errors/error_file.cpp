#include "ddprun/errors/error_file.hpp"

#include "ddprun/util/files.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <system_error>

namespace ddprun::errors {
namespace {

using OrderedJson = nlohmann::ordered_json;

// Worker output is not always UTF-8: invalid bytes become U+FFFD instead of an exception.
std::string dump(const OrderedJson& doc) {
  return doc.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) {
    out += line + "\n";
  }
  return out;
}

// Copy of the worker's record; nullopt when the text no longer parses.
std::optional<std::string> copy_with_error_code(const std::string& raw, int exit_code) {
  OrderedJson doc = OrderedJson::parse(raw, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return std::nullopt;
  }
  auto message = doc.find("message");
  if (exit_code != 0 && message != doc.end() && message->is_object()) {
    (*message)["errorCode"] = exit_code;
  }
  return dump(doc);
}

}  // namespace

std::string render_error_record(std::string_view message, std::string_view callstack,
                                std::int64_t timestamp, int error_code) {
  OrderedJson inner;
  inner["message"] = std::string(message);
  inner["extraInfo"] = {{"py_callstack", std::string(callstack)},
                        {"timestamp", std::to_string(timestamp)}};
  if (error_code != 0) {
    inner["errorCode"] = error_code;
  }
  OrderedJson doc;
  doc["message"] = std::move(inner);
  return dump(doc);
}

std::string render_parent_error_file(const ProcessFailure& root) {
  if (!root.record_json.empty()) {
    if (auto copy = copy_with_error_code(root.record_json, root.exit_code)) {
      return *copy;
    }
  }
  auto callstack = root.stderr_tail.empty() ? root.message : join_lines(root.stderr_tail);
  return render_error_record(root.message, callstack, root.timestamp, root.exit_code);
}

std::optional<Result<ErrorRecord>> read_error_file(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) {
    return std::nullopt;
  }
  auto text = util::read_file(path);
  if (!text) {
    return Result<ErrorRecord>(
        make_error(ErrorCode::io, "error file " + path + ": cannot open for reading"));
  }
  auto record = parse_error_file(*text);
  if (!record) {
    return Result<ErrorRecord>(
        make_error(ErrorCode::protocol, path + ": " + record.error().message));
  }
  return record;
}

Result<void> write_error_file(const std::string& path, std::string_view text) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) {
    return make_error(ErrorCode::io, "error file " + path + ": cannot write");
  }
  return {};
}

std::string add_extra_info(const std::string& record, const std::string& key,
                           const std::string& value) {
  OrderedJson doc = OrderedJson::parse(record, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return record;
  }
  auto message = doc.find("message");
  if (message != doc.end() && message->is_object()) {
    (*message)["extraInfo"][key] = value;
  } else {
    doc[key] = value;
  }
  return dump(doc);
}

Result<void> write_parent_error_file(const std::string& path, const ProcessFailure& root) {
  return write_error_file(path, render_parent_error_file(root));
}

}  // namespace ddprun::errors
