// The client's TLS context: peer verification always on, the CA file (or the system's CA
// paths), and the client certificate for clusters started with --client-cert-auth.

#include "tls_context.hpp"

#include <fmt/format.h>

namespace ddprun::etcd {
namespace {

Error tls_error(std::string_view what, const std::string& file,
                const boost::system::error_code& ec) {
  return make_error(ErrorCode::config, fmt::format("etcd TLS: cannot load the {} \"{}\": {}", what,
                                                   file, ec.message()));
}

}  // namespace

Result<std::unique_ptr<asio::ssl::context>> make_tls_context(const TlsFiles& files) {
  auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  ctx->set_verify_mode(asio::ssl::verify_peer);
  boost::system::error_code ec;
  if (files.ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
  } else {
    ctx->load_verify_file(files.ca_file, ec);
  }
  if (ec) {
    return tls_error("CA file", files.ca_file, ec);
  }
  if (files.cert_file.empty() != files.key_file.empty()) {
    return make_error(ErrorCode::config,
                      "etcd TLS: a client certificate needs both cert and key files");
  }
  if (!files.cert_file.empty()) {
    ctx->use_certificate_chain_file(files.cert_file, ec);
    if (ec) {
      return tls_error("client certificate", files.cert_file, ec);
    }
    ctx->use_private_key_file(files.key_file, asio::ssl::context::pem, ec);
    if (ec) {
      return tls_error("client key", files.key_file, ec);
    }
  }
  return ctx;
}

}  // namespace ddprun::etcd
