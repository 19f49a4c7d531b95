#pragma once

#include "ddprun/etcd/client.hpp"
#include "ddprun/net/asio.hpp"
#include "ddprun/util/result.hpp"

#include <boost/asio/ssl.hpp>

#include <memory>

namespace ddprun::etcd {

/// ErrorCode::config naming the file that could not be loaded.
Result<std::unique_ptr<asio::ssl::context>> make_tls_context(const TlsFiles& files);

}  // namespace ddprun::etcd
