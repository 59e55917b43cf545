/// Something that keeps state belonging to the signed-in account — cookies, tokens, cached
/// responses, recorded traffic — and can forget it, so the next account never sees the previous
/// one's data.
///
/// ``APIClient/resetSession(also:)`` calls every participant it knows of: the client's transport
/// and interceptors when they conform, plus the ones passed in (a token store, a cache partition,
/// an app database). Conform your own stores, or wrap a call in ``SessionResetAction``.
///
/// Conformers in Courier: ``URLSessionTransport`` (cookies, credentials, connections),
/// ``PinningTransport`` (its base transport), ``CacheInterceptor`` (the account's cache partition),
/// ``AuthInterceptor`` (signs out of its ``TokenManager``) and ``SnapshotStore``; in
/// CourierTransfers, `ResumableUploadStore` (unfinished tus uploads).
public protocol SessionResettable: Sendable {
    /// Forgets everything this participant holds for the current account.
    /// - Throws: When the state could not be removed (e.g. a Keychain error); the reset still goes
    ///   on with the other participants.
    func resetSession() async throws

    /// When this participant is reset relative to the others; ``SessionResetStage/storedState``
    /// by default.
    var sessionResetStage: SessionResetStage { get }

    /// The pieces of session state this participant holds, each named so that a client built for
    /// an environment set (`APIClient(environments:…)`) can refuse two environments sharing one
    /// (``EnvironmentError/sharedSessionState(_:)``); none by default.
    var sessionStateIdentities: [SessionStateIdentity] { get }
}

extension SessionResettable {
    /// ``SessionResetStage/storedState``.
    public var sessionResetStage: SessionResetStage { .storedState }
    /// None.
    public var sessionStateIdentities: [SessionStateIdentity] { [] }
}

/// When a participant of ``APIClient/resetSession(also:)`` is reset, relative to the others:
/// participants of an earlier stage first, in the pipeline's order within a stage.
public enum SessionResetStage: Int, Sendable, Hashable, Comparable {
    /// Signing out, before anything else, so that no request started during the reset still
    /// carries the old credentials and refills what is cleared next (``AuthInterceptor``).
    case signOut = 0
    /// The transport's cookies, credentials and connections (``URLSessionTransport``).
    case connections = 1
    /// Stored state: cached responses, snapshots, recorded traffic (the default).
    case storedState = 2

    /// Orders stages by when they are reset.
    public static func < (lhs: SessionResetStage, rhs: SessionResetStage) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One piece of session state (a URLSession, a cookie storage, a token file, a cache partition),
/// identified so that two holders of the same piece can be recognised.
public struct SessionStateIdentity: Sendable, Hashable {
    /// Equal for two holders of the same state, e.g. `"cookies:" + the storage's object identity`.
    public let key: String
    /// How the state is named in an error, e.g. `"one cookie storage"`.
    public let label: String

    /// Creates an identity.
    /// - Parameters:
    ///   - key: Equal for every holder of the same state, distinct otherwise.
    ///   - label: A short description for error messages.
    public init(key: String, label: String) {
        self.key = key
        self.label = label
    }

    /// The identity of a reference-type piece of state, keyed by its object identity.
    /// - Parameters:
    ///   - kind: A prefix that keeps kinds apart, e.g. `"cookies"`.
    ///   - object: The object holding the state.
    ///   - label: A short description for error messages.
    public init(_ kind: String, object: AnyObject, label: String) {
        self.init(key: "\(kind):\(ObjectIdentifier(object))", label: label)
    }
}

/// A ``SessionResettable`` made from a closure, for stores that don't conform themselves.
///
/// ```swift
/// try await client.resetSession(also: [
///     SessionResetAction("tokens") { try await tokenManager.signOut() },
///     SessionResetAction("cache") { await cache.removeAll(partition: account.id) },
/// ])
/// ```
public struct SessionResetAction: SessionResettable, CustomStringConvertible {
    /// A name for error reports.
    public let name: String
    private let action: @Sendable () async throws -> Void

    /// Wraps `action` under `name`.
    public init(_ name: String, _ action: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.action = action
    }

    public func resetSession() async throws { try await action() }

    /// The name.
    public var description: String { name }
}

/// Some participants of a session reset failed; the others were reset.
public struct SessionResetError: Error, CustomStringConvertible {
    /// One participant's failure.
    public struct Failure: Sendable {
        /// The participant, as described by `String(describing:)` (or ``SessionResetAction/name``).
        public let participant: String
        /// What it threw.
        public let error: any Error

        /// A failure of `participant` with `error`.
        package init(participant: String, error: any Error) {
            self.participant = participant
            self.error = error
        }
    }

    /// Every failure, in the order participants were reset.
    public let failures: [Failure]

    /// An error listing `failures`.
    package init(failures: [Failure]) { self.failures = failures }

    public var description: String {
        "session reset incomplete: " + failures.map { "\($0.participant): \($0.error)" }.joined(separator: "; ")
    }
}

/// Resets `participants` in order; every one is attempted even when an earlier one fails.
///
/// - Throws: ``SessionResetError`` listing the participants that failed.
package func resetSession(of participants: [any SessionResettable]) async throws {
    var failures: [SessionResetError.Failure] = []
    for participant in participants {
        do {
            try await participant.resetSession()
        } catch {
            failures.append(.init(participant: String(describing: participant), error: error))
        }
    }
    if !failures.isEmpty { throw SessionResetError(failures: failures) }
}
