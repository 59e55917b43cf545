import Foundation
import Courier

/// Something that happened to a mutation, published by ``MutationQueue/events()``.
///
/// Every outcome is reported: a mutation ends as `sent`, `deadLettered`, `discarded` or a dropping
/// `conflict` (``ConflictResolution/serverWon``, ``ConflictResolution/mergeDropped``).
public struct MutationEvent: Sendable {
    /// What happened.
    public enum Outcome: Sendable {
        /// Stored durably; `replaced` when it coalesced with a pending mutation of the same id.
        case enqueued(replaced: Bool)
        /// Delivered: the server answered with this 2xx status.
        case sent(statusCode: Int)
        /// A transient failure (offline, timed out, connection lost, 408, 429, 5xx): the mutation
        /// stays at the head of its group; its group is tried again after `delay` (seconds, or
        /// sooner on connectivity or an explicit flush).
        case retrying(NetworkError, delay: Duration)
        /// A permanent failure (a 4xx other than 408/409/412/429, or a transport failure another
        /// try would repeat, such as `URLError.cannotParseResponse`): moved to the dead-letter table.
        case deadLettered(DeadLetter)
        /// A 409 or 412, resolved by the kind's ``ConflictPolicy``.
        case conflict(ConflictResolution, statusCode: Int)
        /// A write of the queue's bookkeeping about this mutation failed (read-only file, full
        /// disk, I/O error, database busy beyond its timeout): the queue stops delivering every
        /// mutation until the write succeeds on a later flush (``MutationQueue/storageFailure``).
        ///
        /// With ``MutationQueueError/unreadableMutation(id:reason:)`` a mutation of its group
        /// cannot be read back: it is set aside, never sent (``MutationQueue/unreadableMutations()``),
        /// the mutations behind it are delivered, and the event comes once per queue;
        /// ``MutationQueue/discardPending(id:)`` removes the row.
        case storageUnavailable(MutationQueueError)
        /// Made in another environment or account than the client's current one: kept, and
        /// delivered there later (``ForeignMutationPolicy/hold``). Reported once per payload by
        /// each queue, when a flush first finds it held.
        case held(MutationOrigin)
        /// Made in another environment or account than the client's current one: deleted without
        /// being sent (``ForeignMutationPolicy/discard``).
        case discarded(MutationOrigin)
    }

    /// The mutation's id.
    public var mutationID: String
    /// Its ordering group.
    public var group: String
    /// What happened.
    public var outcome: Outcome
    /// Mutations still pending after this event (for "3 changes waiting").
    public var pendingCount: Int
}

/// The result of one ``MutationQueue/flush()``.
public struct FlushReport: Sendable, Hashable {
    /// Mutations delivered during the flush.
    public var sent: Int
    /// Mutations moved to the dead-letter table.
    public var deadLettered: Int
    /// Mutations dropped by a conflict policy (server wins, merge returned `nil`).
    public var dropped: Int
    /// Transient failures (each stops its group until its backoff ends).
    public var transientFailures: Int
    /// Mutations still pending when the flush returned (every environment and account, and those
    /// that cannot be read back: ``MutationQueue/unreadableMutations()``).
    public var pending: Int
    /// Pending mutations of another environment or account, kept for later
    /// (``ForeignMutationPolicy/hold``), as counted by the flush's last pass.
    public var held: Int = 0
    /// Mutations of another environment or account deleted unsent (``ForeignMutationPolicy/discard``).
    public var discarded: Int = 0
    /// Whether another queue on the same database file (usually in another process) was
    /// delivering, so this flush sent nothing: that queue delivers this process's mutations too,
    /// and this one tries again after ``MutationQueue/Configuration/drainLockRetryInterval``.
    public var otherQueueDelivering: Bool = false
}
