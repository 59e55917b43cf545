import Foundation
import Courier

extension MutationQueue {
    /// How a kind of mutation is sent and how its conflicts end.
    public struct KindPolicy: Sendable {
        /// The endpoint policy the request is sent with (auth, deadline, logging). Its
        /// `EndpointPolicy.idempotency` is replaced by the mutation's key, so the client's
        /// pipeline needs an `IdempotencyInterceptor` (`.standard()` has one).
        public var policy: EndpointPolicy
        /// What a 409 or 412 does.
        public var conflictPolicy: ConflictPolicy

        /// Creates a kind policy. Default: ``MutationQueue/Configuration/defaultEndpointPolicy``,
        /// server wins.
        public init(policy: EndpointPolicy = Configuration.defaultEndpointPolicy, conflictPolicy: ConflictPolicy = .serverWins) {
            self.policy = policy
            self.conflictPolicy = conflictPolicy
        }
    }

    /// Queue settings.
    public struct Configuration: Sendable {
        /// `.standard` without in-call retries (the queue does its own backoff, durably) and a
        /// 30 s deadline.
        public static let defaultEndpointPolicy = EndpointPolicy.standard.with(\.retry, .none).with(\.deadline, .seconds(30))

        /// The policy for mutations whose kind is not in ``kinds``.
        public var defaultKind = KindPolicy()
        /// Per-kind policies, by ``Mutation/kind``.
        public var kinds: [String: KindPolicy] = [:]
        /// The backoff of a group after transient failures (never shorter than a `Retry-After`):
        /// `Backoff.queue`, 1 s doubling to 5 minutes with equal jitter.
        public var backoff = Backoff.queue
        /// Whether `enqueue` starts delivering at once (respecting any backoff). When `false`,
        /// only ``MutationQueue/flush()``, connectivity and the backoff timer send.
        public var sendsOnEnqueue = true
        /// How many conflict resolutions (last-write-wins resends, merges) one mutation may go
        /// through before it is dead-lettered as ``ConflictResolution/unresolved``.
        public var maxConflictResolutions = 3
        /// The clock the backoff waits on; inject a test clock to drive it.
        public var clock: any Clock<Duration> = ContinuousClock()
        /// The jitter's random source, values in `0...1`.
        public var random: @Sendable () -> Double = { Double.random(in: 0...1) }
        /// The wall clock for enqueue times and ages.
        public var now: @Sendable () -> Date = { Date() }
        /// The account partition current now (a user id, a tenant), recorded with each mutation
        /// at ``MutationQueue/enqueue(_:)``; a mutation is delivered only while the same value is
        /// current. `nil` (the default) when the app has no accounts, or while signed out.
        ///
        /// A mutation of an account is sent only with a token of a sign-in that was current while
        /// this reported its account: the auth step reads the `TokenManager`'s sign-in, then this
        /// value, then the token, and refuses a token of a later sign-in (nothing is sent; the
        /// mutation stays queued for its account). For that to hold, report the signed-in user or
        /// `nil`, never a previous user: set it to `nil` before another user's tokens are signed in
        /// (`TokenManager.signIn(_:)`, or a sign-out first), and to the new user after.
        public var account: @Sendable () -> String? = { nil }
        /// What happens to mutations made in another environment or account than the current one.
        public var foreignMutations = ForeignMutationPolicy.hold
        /// How long a queue waits before trying again to deliver when another queue on the same
        /// file (usually another process: an app extension, a second app instance) is delivering.
        public var drainLockRetryInterval: Duration = .seconds(1)

        /// Creates the default configuration.
        public init() {}

        func kind(_ name: String) -> KindPolicy { kinds[name] ?? defaultKind }
    }
}
