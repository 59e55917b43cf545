import Courier

extension CurlTransport {
    /// `SessionResetStage.connections`: reset after sign-out, before stored state.
    public var sessionResetStage: SessionResetStage { .connections }

    /// This transport's cookie jar and connection pool (one per transport, never shared).
    public var sessionStateIdentities: [SessionStateIdentity] {
        [SessionStateIdentity("curl-transport", object: self, label: "one CurlTransport (its cookies and connections)")]
    }
}
