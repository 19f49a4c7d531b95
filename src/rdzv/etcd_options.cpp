#include "ddprun/rdzv/etcd_options.hpp"

#include "ddprun/util/files.hpp"
#include "ddprun/util/random.hpp"
#include "ddprun/util/strings.hpp"

namespace ddprun::rdzv {
namespace {

/// The etcd password, from --rdzv-conf password_file (one trailing newline removed).
Result<std::string> read_password_file(const std::string& path) {
  auto text = util::read_file(path);
  if (!text) {
    return make_error(ErrorCode::config,
                      "--rdzv-conf password_file " + util::quoted(path) + ": cannot be read");
  }
  std::string password = std::move(*text);
  if (!password.empty() && password.back() == '\n') {
    password.pop_back();
  }
  return password;
}

}  // namespace

Result<etcd::ClientOptions> etcd_client_options(const config::EtcdSettings& settings) {
  etcd::ClientOptions options;
  options.endpoints = settings.endpoints;
  options.tls = {settings.ca_file, settings.cert_file, settings.key_file};
  options.username = settings.username;
  options.first_member = static_cast<std::size_t>(util::agent_random().next());
  if (!settings.password_file.empty()) {
    auto password = read_password_file(settings.password_file);
    if (!password) {
      return password.error();
    }
    options.password = std::move(*password);
  }
  return options;
}

}  // namespace ddprun::rdzv
