/// The ``RequestContext`` slot holding the latest ``RequestSnapshot`` of the call.
public enum RequestSnapshotKey: RequestContextKey {
    /// The stored type.
    public typealias Value = RequestSnapshot
}

/// The ``RequestContext`` slot holding the latest ``ResponseSnapshot`` of the call.
public enum ResponseSnapshotKey: RequestContextKey {
    /// The stored type.
    public typealias Value = ResponseSnapshot
}

/// The ``RequestContext`` slot holding the latest ``ErrorSnapshot`` of the call.
public enum ErrorSnapshotKey: RequestContextKey {
    /// The stored type.
    public typealias Value = ErrorSnapshot
}

/// Secret values learned while redacting this call, shared by every logging interceptor of the
/// call so a value hidden in the request is also hidden in the response. Internal: never exposed.
enum LearnedSecretsKey: RequestContextKey {
    typealias Value = SecretValues
}

extension RequestContext {
    /// The redacted request as the ``LoggingInterceptor`` last saw it; `nil` when no logging
    /// interceptor ran or the endpoint's ``LoggingPolicy`` is ``LoggingPolicy/disabled``.
    public var requestSnapshot: RequestSnapshot? {
        get { self[RequestSnapshotKey.self] }
        set { self[RequestSnapshotKey.self] = newValue }
    }

    /// The redacted response the ``LoggingInterceptor`` last saw.
    public var responseSnapshot: ResponseSnapshot? {
        get { self[ResponseSnapshotKey.self] }
        set { self[ResponseSnapshotKey.self] = newValue }
    }

    /// The redacted error the ``LoggingInterceptor`` last saw, when an attempt or the call failed
    /// without a response.
    public var errorSnapshot: ErrorSnapshot? {
        get { self[ErrorSnapshotKey.self] }
        set { self[ErrorSnapshotKey.self] = newValue }
    }
}
