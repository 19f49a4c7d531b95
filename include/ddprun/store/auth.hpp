#pragma once
// Rendezvous authentication (docs/reliability.md, Security). A store started with a token
// protects every key under "ddprun/": only connections that completed a mutual HMAC-SHA256
// challenge-response may touch them. The handshake rides on ordinary COMPARE_SET requests on
// reserved keys, so it works in every dialect and needs no change to dialect detection; a
// store without a token answers them like any missing key (it echoes `expected`), which the
// client recognises. Workers' keys stay open: PyTorch clients cannot authenticate.
//
//   client                                        server (token T)
//   CAS(hello, expected = Nc)            ->       picks Ns
//                                        <-       Ns || HMAC(T, "server" Nc Ns)   (hex)
//   checks the server's proof
//   CAS(proof, expected = HMAC(T, "client" Ns Nc))  ->  checks it
//                                        <-       "ok" (connection authenticated) | "denied"
//
// Everything here is pure: nonces come in from the caller.

#include "ddprun/store/protocol.hpp"
#include "ddprun/util/env.hpp"
#include "ddprun/util/result.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ddprun::store {

inline constexpr std::string_view k_protected_prefix = "ddprun/";
inline constexpr std::string_view k_auth_hello_key = "ddprun/.auth/hello";
inline constexpr std::string_view k_auth_proof_key = "ddprun/.auth/proof";
inline constexpr std::string_view k_auth_probe_key = "ddprun/.auth/required";
inline constexpr std::string_view k_auth_probe_value = "probe";
inline constexpr std::string_view k_auth_required_reply = "ddprun-auth:token-required";
inline constexpr std::string_view k_auth_ok_reply = "ddprun-auth:ok";
inline constexpr std::string_view k_auth_denied_reply = "ddprun-auth:denied";
/// Random bytes per nonce; nonces and proofs travel as lower-case hex.
inline constexpr std::size_t k_auth_nonce_bytes = 32;

/// True for keys under k_protected_prefix.
bool is_protected_key(std::string_view key);
/// True for the COMPARE_SETs of the handshake (hello, proof, probe).
bool is_auth_request(const Request& request);

/// Why an unauthenticated connection may not make this request, or nullopt when it may. The
/// reason names the operation and at most k_log_key_chars of the key, never a value.
/// LIST_KEYS and GET_NUM_KEYS are allowed: the server leaves protected keys out of them.
std::optional<std::string> access_denial(const Request& request);

std::string server_proof(std::string_view token, std::string_view client_nonce,
                         std::string_view server_nonce);
std::string client_proof(std::string_view token, std::string_view client_nonce,
                         std::string_view server_nonce);

/// One connection's handshake progress on the server.
struct ServerAuthState {
  bool authenticated = false;
  std::string client_nonce;  ///< set between hello and proof
  std::string server_nonce;
};

/// The COMPARE_SET reply for one handshake request, and a warning to log when it failed.
struct AuthStep {
  std::string reply;
  std::optional<std::string> warning;
};

/// Server side of the handshake for a request with is_auth_request(). `fresh_nonce` is used
/// when the request is a hello.
AuthStep server_auth_step(std::string_view token, ServerAuthState& state, const Request& request,
                          std::string_view fresh_nonce);

/// Client side, after the hello: the proof to send, or ErrorCode::config naming `where` when the
/// store has no token or does not know ours.
Result<std::string> check_hello_reply(std::string_view token, std::string_view client_nonce,
                                      std::string_view reply, std::string_view where);
/// Client side, after the proof (or the probe of a client without a token).
Result<void> check_final_reply(std::string_view reply, std::string_view where);
Result<void> check_probe_reply(std::string_view reply, std::string_view where);

// --- Where an agent's token comes from ---

enum class TokenKind { none, file, env, job_file };

/// The token source in precedence order: --rdzv_conf token_file=PATH > DDPRUN_RDZV_TOKEN >
/// under Slurm/PBS the job's shared token file (used only when it exists) > none.
struct TokenSource {
  TokenKind kind = TokenKind::none;
  std::string path;    ///< file, job_file
  std::string value;   ///< env
  std::string job_id;  ///< job_file: mixed into the derived token
  std::string origin;  ///< for log lines: "--rdzv_conf token_file", "DDPRUN_RDZV_TOKEN", ...
};

/// The batch job whose shared token file applies; the caller fills it from sched::Detected.
struct JobTokenDir {
  std::string job_id;   ///< mixed into the derived token
  std::string dir;      ///< the job's submit directory, which holds k_job_token_path
  std::string dir_var;  ///< the variable that gave `dir`, for log lines ("SLURM_SUBMIT_DIR")
};

inline constexpr std::string_view k_token_env = "DDPRUN_RDZV_TOKEN";
inline constexpr std::string_view k_token_conf_key = "token_file";
/// Relative to $SLURM_SUBMIT_DIR or $PBS_O_WORKDIR.
inline constexpr std::string_view k_job_token_path = ".ddprun/token";

TokenSource decide_token_source(const std::map<std::string, std::string>& rdzv_conf,
                                const util::Env& env, const std::optional<JobTokenDir>& job);
/// The job's token: hex(HMAC-SHA256(secret, "ddprun-rdzv-token:" + job_id)), so one shared
/// file yields a different token in every job.
std::string derive_job_token(std::string_view secret, std::string_view job_id);
/// A token file must give its group and others no access; otherwise a one-line reason.
std::optional<std::string> token_mode_problem(std::string_view path, unsigned mode);
/// Trailing whitespace (a newline) is dropped; an empty token is an error naming `origin`.
Result<std::string> normalize_token(std::string_view text, std::string_view origin);

}  // namespace ddprun::store
