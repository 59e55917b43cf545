extension APIClient {
    /// The first promise of `policy` that this client's pipeline cannot keep (an endpoint that
    /// requires auth on a pipeline without an ``AuthInterceptor``, an idempotency key without an
    /// ``IdempotencyInterceptor``, …), described as ``NetworkError/missingInterceptor(_:)`` would;
    /// `nil` when the pipeline keeps them all. For components that send on the app's behalf later
    /// (the offline queue) and refuse a configuration at setup rather than at the first send.
    package func missingCapability(for policy: EndpointPolicy) -> String? {
        policy.missingCapability(in: routing.lane.capabilities)
    }
}
