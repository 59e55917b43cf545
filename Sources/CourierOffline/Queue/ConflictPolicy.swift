import Foundation
import Courier

/// What the queue does when the server answers a mutation with 409 Conflict (RFC 9110 §15.5.10)
/// or 412 Precondition Failed (RFC 9110 §15.5.13).
///
/// Not a conflict: a 409 to an `Idempotency-Key` that an earlier attempt carried without a final
/// answer (it timed out, the connection was lost). A server that honours the key answers a retry
/// sent while the first request is still being processed with 409
/// (draft-ietf-httpapi-idempotency-key-header); the queue retries it under the same key after a
/// backoff, up to 8 attempts under the key, before it applies this policy.
public enum ConflictPolicy: Sendable {
    /// Resend the mutation without its preconditions (`If-Match`, `If-None-Match`,
    /// `If-Unmodified-Since`, `If-Modified-Since`, RFC 9110 §13.1): the local change overwrites
    /// the server's.
    case lastWriteWins
    /// Drop the local change: the server's state stands. Reported as
    /// ``ConflictResolution/serverWon``.
    case serverWins
    /// Ask the app: the callback receives the conflict (the mutation and the server's response,
    /// which usually carries its current state) and returns the mutation to send instead, or
    /// `nil` to drop the local change. Throwing moves the mutation to the dead-letter table.
    case merge(@Sendable (MutationConflict) async throws -> Mutation?)
}

/// A 409 or 412 answer to a mutation, as given to a ``ConflictPolicy/merge(_:)`` callback.
public struct MutationConflict: Sendable {
    /// The mutation the server refused.
    public var mutation: Mutation
    /// The server's response (status 409 or 412, headers such as `ETag`, body).
    public var response: FailedResponse
}

/// How a conflict ended (reported in ``MutationEvent/Outcome/conflict(_:statusCode:)``).
public enum ConflictResolution: Sendable, Hashable {
    /// Last write wins: the mutation is sent again without preconditions.
    case resentWithoutPreconditions
    /// Server wins: the local change was dropped.
    case serverWon
    /// The merge callback returned a mutation, which replaces the pending one.
    case merged
    /// The merge callback returned `nil`: the local change was dropped.
    case mergeDropped
    /// The conflict could not be resolved (the merge callback threw, or the server kept
    /// answering 409/412 after ``MutationQueue/Configuration/maxConflictResolutions``
    /// resolutions): the mutation went to the dead-letter table.
    case unresolved
}
