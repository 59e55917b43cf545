import Foundation
import Courier

/// One change the app wants the server to apply, stored durably until it is delivered.
///
/// Endpoint-shaped: method, path (relative to the client's environment, each segment
/// percent-encoded like `Request`, so a `?` or `#` in it is sent as `%3F`/`%23`), query items,
/// header fields and body bytes. The ``id`` is assigned by the
/// app, identifies the change across launches and is sent as its `Idempotency-Key`
/// (draft-ietf-httpapi-idempotency-key-header), so a replay after a crash is recognised by the
/// server instead of applied twice. Enqueueing another mutation with the same ``id`` while the
/// first is pending replaces it (coalescing). A replacement of a payload that may already have
/// been sent, and a later change under an id whose earlier change left the queue (delivered,
/// dropped, discarded), go out under a new key, `id~n`: a server remembers a key with its payload
/// and refuses the key with another one. The queue remembers spent keys for 30 days by the wall
/// clock, and the 1,000 most recent whatever the clock says (a device clock set forward, or one
/// that was behind, forgets none of them).
public struct Mutation: Sendable, Hashable {
    /// The app's id for this change (non-empty visible ASCII), also its `Idempotency-Key`.
    public var id: String
    /// The request method (`POST`, `PUT`, `PATCH`, `DELETE`).
    public var method: HTTPMethod
    /// The path below the environment's base URL, unencoded, e.g. `/items/42`. As for `Request`,
    /// each segment is percent-encoded, so a `?` or `#` here is part of the path (sent as
    /// `%3F`/`%23`): put parameters in ``query``.
    public var path: String
    /// The query items, in order, percent-encoded when sent (`+` as `%2B`, space as `%20`); an
    /// item with a `nil` value is sent as a bare name (`?flag`). Stored with the mutation.
    public var query: [URLQueryItem]
    /// Header fields sent with the request, e.g. a precondition such as `If-Match`.
    public var headers: HTTPHeaders
    /// The body bytes; `nil` sends none.
    public var body: Data?
    /// The body's `Content-Type`; ignored without a body.
    public var contentType: String?
    /// The ordering group: mutations of one group are delivered one at a time in enqueue order;
    /// different groups do not wait for each other. `"default"` unless the app groups by entity.
    public var group: String
    /// The mutation kind, which selects the endpoint policy and the conflict policy
    /// (``MutationQueue/Configuration/kinds``). `"default"` unless set.
    public var kind: String

    /// Creates a mutation.
    public init(
        id: String, method: HTTPMethod, path: String, query: [URLQueryItem] = [], headers: HTTPHeaders = HTTPHeaders(),
        body: Data? = nil, contentType: String? = nil, group: String = "default", kind: String = "default"
    ) {
        self.id = id
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.contentType = body == nil ? nil : (contentType ?? "application/json")
        self.group = group
        self.kind = kind
    }

    /// A mutation whose body is `value` encoded as JSON (`Content-Type: application/json`).
    ///
    /// - Throws: `EncodingError` when `value` cannot be encoded.
    public static func json(
        id: String, method: HTTPMethod, path: String, query: [URLQueryItem] = [], body value: some Encodable,
        headers: HTTPHeaders = HTTPHeaders(), group: String = "default", kind: String = "default",
        encoder: JSONEncoder = APIClient.makeEncoder()
    ) throws -> Mutation {
        Mutation(
            id: id, method: method, path: path, query: query, headers: headers, body: try encoder.encode(value),
            contentType: "application/json", group: group, kind: kind)
    }

    /// Whether two mutations would send the same request (same id, method, path, query, headers, body).
    func sendsSameRequest(as other: Mutation) -> Bool {
        id == other.id && method == other.method && path == other.path && query == other.query && headers == other.headers
            && body == other.body && contentType == other.contentType
    }
}

/// A mutation waiting in the queue, as the app sees it.
public struct PendingMutation: Sendable, Hashable {
    /// The mutation as enqueued (or as rewritten by a conflict resolution).
    public var mutation: Mutation
    /// The `Idempotency-Key` the next attempt sends: the ``Mutation/id``, or `id~N` after the
    /// payload was replaced (coalescing or conflict resolution) once an attempt may have reached
    /// the server, so the server never sees one key with two payloads.
    public var idempotencyKey: String
    /// Failed attempts so far for this payload (transient failures recorded).
    public var attempts: Int
    /// When it was first enqueued (wall clock).
    public var enqueuedAt: Date
    /// The last transient failure, as text; `nil` before the first failure.
    public var lastError: String?
    /// The environment and account it was made in: it is delivered only there.
    public var origin: MutationOrigin
}

/// A stored mutation whose row cannot be read back as it was written (a damaged page, another
/// program or a newer build writing the file). A pending one (``MutationQueue/unreadableMutations()``)
/// is set aside, never sent, while the mutations behind it, in its group too, are delivered; it
/// stays stored until ``MutationQueue/discardPending(id:)`` removes it. A dead letter
/// (``MutationQueue/unreadableDeadLetters()``) stays until ``MutationQueue/discardDeadLetter(id:)``.
public struct UnreadableMutation: Sendable, Hashable {
    /// Its id; `nil` when even the id cannot be read.
    public var id: String?
    /// Its ordering group; `nil` when it cannot be read.
    public var group: String?
    /// When it was enqueued (wall clock).
    public var enqueuedAt: Date
    /// The environment and account it was made in.
    public var origin: MutationOrigin
    /// What cannot be read: ``MutationQueueError/unreadableMutation(id:reason:)``.
    public var error: MutationQueueError
}

/// A mutation that failed permanently, kept until the app retries or discards it.
public struct DeadLetter: Sendable, Hashable {
    /// The mutation that failed.
    public var mutation: Mutation
    /// The HTTP status, when the server answered.
    public var statusCode: Int?
    /// What went wrong, e.g. `HTTP 422: name must not be empty`.
    public var reason: String
    /// The response body the server sent (its error details), possibly empty.
    public var responseBody: Data
    /// Attempts made before it failed.
    public var attempts: Int
    /// When it was enqueued (wall clock).
    public var enqueuedAt: Date
    /// When it was moved to the dead-letter table (wall clock).
    public var failedAt: Date
    /// The environment and account it was made in (``MutationQueue/retryDeadLetter(id:)``
    /// queues it there again).
    public var origin: MutationOrigin
}

/// Where a mutation belongs: the environment (`APIEnvironment.name`, which is
/// `APIEnvironment.id` for a client built for an `EnvironmentSet`) and the account partition
/// (``MutationQueue/Configuration/account``) current when it was enqueued. The queue delivers a
/// mutation only while its client points at that environment and the same account is current
/// (``MutationQueue/Configuration/foreignMutations`` says what happens otherwise): a change made
/// against staging never reaches production, one user's edit never goes out under another's
/// session.
public struct MutationOrigin: Sendable, Hashable, CustomStringConvertible {
    /// The environment's name; `nil` for a mutation stored by a version of Courier that did not
    /// record it (delivered wherever the client points).
    public var environment: String?
    /// The account partition; `nil` when the app declares none or none was current.
    public var account: String?

    /// Creates an origin.
    public init(environment: String?, account: String?) {
        self.environment = environment
        self.account = account
    }

    /// `environment 'staging', account 'u1'`.
    public var description: String {
        let place = environment.map { "environment '\($0)'" } ?? "an unrecorded environment"
        return account.map { "\(place), account '\($0)'" } ?? place
    }
}
