/// The ``RequestContext`` slot holding the latest ``RequestRecord`` of the call.
package enum RequestRecordKey: RequestContextKey {
    /// The stored type.
    package typealias Value = RequestRecord
}

/// The ``RequestContext`` slot holding the latest ``ResponseRecord`` of the call.
package enum ResponseRecordKey: RequestContextKey {
    /// The stored type.
    package typealias Value = ResponseRecord
}

/// The ``RequestContext`` slot holding the latest ``ErrorRecord`` of the call.
package enum ErrorRecordKey: RequestContextKey {
    /// The stored type.
    package typealias Value = ErrorRecord
}

/// Secret values learned while redacting this call, shared by every logging interceptor of the
/// call so a value hidden in the request is also hidden in the response. Internal: never exposed.
enum LearnedSecretsKey: RequestContextKey {
    typealias Value = SecretValues
}

extension RequestContext {
    /// The redacted request as the ``LoggingInterceptor`` last saw it; `nil` when no logging
    /// interceptor ran or the endpoint's ``LoggingPolicy`` is ``LoggingPolicy/disabled``.
    public var requestRecord: RequestRecord? {
        get { self[RequestRecordKey.self] }
        set { self[RequestRecordKey.self] = newValue }
    }

    /// The redacted response the ``LoggingInterceptor`` last saw.
    public var responseRecord: ResponseRecord? {
        get { self[ResponseRecordKey.self] }
        set { self[ResponseRecordKey.self] = newValue }
    }

    /// The redacted error the ``LoggingInterceptor`` last saw, when an attempt or the call failed
    /// without a response.
    public var errorRecord: ErrorRecord? {
        get { self[ErrorRecordKey.self] }
        set { self[ErrorRecordKey.self] = newValue }
    }
}
