// Rendezvous authentication: the pure decisions (see auth.hpp for the exchange).

#include "ddprun/store/auth.hpp"

#include "ddprun/util/crypto.hpp"
#include "ddprun/util/strings.hpp"

#include <fmt/format.h>

namespace ddprun::store {
namespace {

constexpr std::string_view k_server_label = "ddprun-rdzv-server:";
constexpr std::string_view k_client_label = "ddprun-rdzv-client:";
constexpr std::string_view k_job_label = "ddprun-rdzv-token:";
constexpr std::size_t k_hex_nonce_chars = 2 * k_auth_nonce_bytes;
constexpr std::size_t k_hex_proof_chars = 2 * util::k_sha256_bytes;
constexpr unsigned k_group_other_bits = 077;

bool is_hex(std::string_view text, std::size_t chars) {
  if (text.size() != chars) {
    return false;
  }
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

std::string mac_hex(std::string_view token, std::string_view label, std::string_view first,
                    std::string_view second) {
  std::string message(label);
  message.append(first).append(":").append(second);
  return util::to_hex(util::hmac_sha256(token, message));
}

std::string_view first_key(const Request& r) {
  if (!r.key.empty()) {
    return r.key;
  }
  for (const auto& k : r.keys) {
    if (is_protected_key(k)) {
      return k;
    }
  }
  for (const auto& [k, v] : r.pairs) {
    if (is_protected_key(k)) {
      return k;
    }
  }
  return {};
}

bool touches_protected(const Request& r) {
  if (is_protected_key(r.key)) {
    return true;
  }
  for (const auto& k : r.keys) {
    if (is_protected_key(k)) {
      return true;
    }
  }
  for (const auto& [k, v] : r.pairs) {
    if (is_protected_key(k)) {
      return true;
    }
  }
  return false;
}

Error auth_error(std::string message) { return make_error(ErrorCode::config, std::move(message)); }

}  // namespace

bool is_protected_key(std::string_view key) { return util::starts_with(key, k_protected_prefix); }

bool is_auth_request(const Request& r) {
  return r.op == Op::compare_set &&
         (r.key == k_auth_hello_key || r.key == k_auth_proof_key || r.key == k_auth_probe_key);
}

std::optional<std::string> access_denial(const Request& r) {
  if (r.op == Op::list_keys || r.op == Op::get_num_keys || !touches_protected(r)) {
    return std::nullopt;
  }
  return fmt::format("{} on protected key '{}' without rendezvous authentication", to_string(r.op),
                     loggable_key(first_key(r)));
}

std::string server_proof(std::string_view token, std::string_view client_nonce,
                         std::string_view server_nonce) {
  return mac_hex(token, k_server_label, client_nonce, server_nonce);
}

std::string client_proof(std::string_view token, std::string_view client_nonce,
                         std::string_view server_nonce) {
  return mac_hex(token, k_client_label, server_nonce, client_nonce);
}

AuthStep server_auth_step(std::string_view token, ServerAuthState& state, const Request& r,
                          std::string_view fresh_nonce) {
  if (r.key == k_auth_probe_key) {
    return {std::string(state.authenticated ? k_auth_ok_reply : k_auth_required_reply), {}};
  }
  if (r.key == k_auth_hello_key) {
    state = ServerAuthState{};
    if (!is_hex(r.value, k_hex_nonce_chars)) {
      return {std::string(k_auth_denied_reply), "malformed authentication hello"};
    }
    state.client_nonce = r.value;
    state.server_nonce = std::string(fresh_nonce);
    return {state.server_nonce + server_proof(token, state.client_nonce, state.server_nonce), {}};
  }
  if (state.client_nonce.empty()) {
    return {std::string(k_auth_denied_reply), "authentication proof without a hello"};
  }
  const std::string expected = client_proof(token, state.client_nonce, state.server_nonce);
  const bool good = util::constant_time_equal(r.value, expected);
  state.client_nonce.clear();
  state.server_nonce.clear();
  if (!good) {
    return {std::string(k_auth_denied_reply), "wrong rendezvous token"};
  }
  state.authenticated = true;
  return {std::string(k_auth_ok_reply), {}};
}

Result<std::string> check_hello_reply(std::string_view token, std::string_view client_nonce,
                                      std::string_view reply, std::string_view where) {
  if (reply == client_nonce) {
    return auth_error(fmt::format(
        "the store at {} does not require a rendezvous token, but this client was given one: it "
        "is not this job's authenticated rendezvous store (or its host agent was started without "
        "the token)",
        where));
  }
  const std::string_view server_nonce = reply.substr(0, k_hex_nonce_chars);
  const std::string_view proof =
      reply.size() > k_hex_nonce_chars ? reply.substr(k_hex_nonce_chars) : std::string_view();
  if (!is_hex(server_nonce, k_hex_nonce_chars) || !is_hex(proof, k_hex_proof_chars) ||
      !util::constant_time_equal(proof, server_proof(token, client_nonce, server_nonce))) {
    return auth_error(fmt::format(
        "rendezvous at {} uses a different token than this agent (or is not a ddprun store); "
        "check --rdzv_conf token_file / DDPRUN_RDZV_TOKEN on every node",
        where));
  }
  return client_proof(token, client_nonce, server_nonce);
}

Result<void> check_final_reply(std::string_view reply, std::string_view where) {
  if (reply == k_auth_ok_reply) {
    return {};
  }
  return auth_error(fmt::format("rendezvous at {} refused this agent's token", where));
}

Result<void> check_probe_reply(std::string_view reply, std::string_view where) {
  if (reply != k_auth_required_reply) {
    return {};
  }
  return auth_error(
      fmt::format("rendezvous at {} requires a token; pass --rdzv_conf token_file=PATH or set "
                  "DDPRUN_RDZV_TOKEN (the same token as the other nodes)",
                  where));
}

TokenSource decide_token_source(const std::map<std::string, std::string>& rdzv_conf,
                                const util::Env& env, const std::optional<JobTokenDir>& job) {
  if (auto it = rdzv_conf.find(std::string(k_token_conf_key)); it != rdzv_conf.end()) {
    return {TokenKind::file, it->second, {}, {}, "--rdzv_conf token_file"};
  }
  if (auto v = env.get_nonempty(k_token_env)) {
    return {TokenKind::env, {}, *v, {}, std::string(k_token_env)};
  }
  if (job) {
    return {TokenKind::job_file,
            job->dir + "/" + std::string(k_job_token_path),
            {},
            job->job_id,
            fmt::format("${}/{}", job->dir_var, k_job_token_path)};
  }
  return {};
}

std::string derive_job_token(std::string_view secret, std::string_view job_id) {
  std::string message(k_job_label);
  message.append(job_id);
  return util::to_hex(util::hmac_sha256(secret, message));
}

std::optional<std::string> token_mode_problem(std::string_view path, unsigned mode) {
  if ((mode & k_group_other_bits) == 0) {
    return std::nullopt;
  }
  return fmt::format(
      "token file {} has mode {:04o}: it must not be readable by the group or others (chmod 600 "
      "{})",
      util::quoted(path), mode & 07777U, path);
}

Result<std::string> normalize_token(std::string_view text, std::string_view origin) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t')) {
    text.remove_suffix(1);
  }
  if (text.empty()) {
    return make_error(ErrorCode::config, fmt::format("rendezvous token from {} is empty", origin));
  }
  return std::string(text);
}

}  // namespace ddprun::store
