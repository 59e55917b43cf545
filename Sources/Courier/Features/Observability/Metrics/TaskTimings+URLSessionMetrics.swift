import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The fields of a `URLSessionTaskTransactionMetrics` that ``TaskTimings`` reads. A protocol, so
/// the mapping runs in tests on Linux, where URLSession never delivers task metrics.
protocol TransactionMetricsReading {
    var fetchStartDate: Date? { get }
    var domainLookupStartDate: Date? { get }
    var domainLookupEndDate: Date? { get }
    var connectStartDate: Date? { get }
    var connectEndDate: Date? { get }
    var secureConnectionStartDate: Date? { get }
    var secureConnectionEndDate: Date? { get }
    var requestStartDate: Date? { get }
    var requestEndDate: Date? { get }
    var responseStartDate: Date? { get }
    var responseEndDate: Date? { get }
    var isReusedConnection: Bool { get }
    var networkProtocolName: String? { get }
    var countOfRequestHeaderBytesSent: Int64 { get }
    var countOfRequestBodyBytesSent: Int64 { get }
    var countOfResponseHeaderBytesReceived: Int64 { get }
    var countOfResponseBodyBytesReceived: Int64 { get }
}

/// The fields of a `URLSessionTaskMetrics` that ``TaskTimings`` reads.
protocol TaskMetricsReading {
    associatedtype Transaction: TransactionMetricsReading
    var transactionMetrics: [Transaction] { get }
    var taskInterval: DateInterval { get }
    var redirectCount: Int { get }
}

/// A `URLSessionTaskMetrics` read through ``TaskMetricsReading``: a wrapper rather than a
/// conformance, so Foundation's type gains nothing in Courier's public interface.
struct SessionTaskMetrics: TaskMetricsReading {
    let base: URLSessionTaskMetrics
    var transactionMetrics: [SessionTransactionMetrics] { base.transactionMetrics.map(SessionTransactionMetrics.init) }
    var taskInterval: DateInterval { base.taskInterval }
    var redirectCount: Int { base.redirectCount }
}

/// A `URLSessionTaskTransactionMetrics` read through ``TransactionMetricsReading``.
struct SessionTransactionMetrics: TransactionMetricsReading {
    let base: URLSessionTaskTransactionMetrics
    var fetchStartDate: Date? { base.fetchStartDate }
    var domainLookupStartDate: Date? { base.domainLookupStartDate }
    var domainLookupEndDate: Date? { base.domainLookupEndDate }
    var connectStartDate: Date? { base.connectStartDate }
    var connectEndDate: Date? { base.connectEndDate }
    var secureConnectionStartDate: Date? { base.secureConnectionStartDate }
    var secureConnectionEndDate: Date? { base.secureConnectionEndDate }
    var requestStartDate: Date? { base.requestStartDate }
    var requestEndDate: Date? { base.requestEndDate }
    var responseStartDate: Date? { base.responseStartDate }
    var responseEndDate: Date? { base.responseEndDate }
    var isReusedConnection: Bool { base.isReusedConnection }
    var networkProtocolName: String? { base.networkProtocolName }
    var countOfRequestHeaderBytesSent: Int64 { base.countOfRequestHeaderBytesSent }
    var countOfRequestBodyBytesSent: Int64 { base.countOfRequestBodyBytesSent }
    var countOfResponseHeaderBytesReceived: Int64 { base.countOfResponseHeaderBytesReceived }
    var countOfResponseBodyBytesReceived: Int64 { base.countOfResponseBodyBytesReceived }
}

extension TaskTimings {
    /// The timings of the task's last transaction (the one that produced the response, after any
    /// redirects), from URLSession's task metrics.
    init(_ metrics: some TaskMetricsReading) {
        let last = metrics.transactionMetrics.last
        let instants = Instants(
            fetchStart: last?.fetchStartDate,
            domainLookupStart: last?.domainLookupStartDate, domainLookupEnd: last?.domainLookupEndDate,
            connectStart: last?.connectStartDate, connectEnd: last?.connectEndDate,
            secureConnectionStart: last?.secureConnectionStartDate, secureConnectionEnd: last?.secureConnectionEndDate,
            requestStart: last?.requestStartDate, requestEnd: last?.requestEndDate,
            responseStart: last?.responseStartDate, responseEnd: last?.responseEndDate)
        self.init(
            instants: instants,
            total: .seconds(metrics.taskInterval.duration),
            isReusedConnection: last?.isReusedConnection,
            networkProtocol: last?.networkProtocolName,
            redirectCount: metrics.redirectCount)
        if let last {
            requestHeaderBytesSent = last.countOfRequestHeaderBytesSent
            requestBodyBytesSent = last.countOfRequestBodyBytesSent
            responseHeaderBytesReceived = last.countOfResponseHeaderBytesReceived
            responseBodyBytesReceived = last.countOfResponseBodyBytesReceived
        }
    }
}

extension TransportSessionDelegate {
    /// Hands the task's metrics, as ``TaskTimings``, to the reporter of its call — when the
    /// platform delivers task metrics (``TransportCapabilities/deliversTaskMetrics``) and an
    /// interceptor asked for timings.
    func reportMetrics(_ id: Int, _ metrics: some TaskMetricsReading) {
        guard capabilities.deliversTaskMetrics, let timings = taskOptions.withLock({ $0[id]?.timings }) else { return }
        timings.report(TaskTimings(metrics))
    }
}
