import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Task metrics become TaskTimings where the platform delivers them (mapping runs on Linux)")
struct TaskMetricsCapabilityTests {
    struct Transaction: TransactionMetricsReading {
        var fetchStartDate: Date?
        var domainLookupStartDate: Date?
        var domainLookupEndDate: Date?
        var connectStartDate: Date?
        var connectEndDate: Date?
        var secureConnectionStartDate: Date?
        var secureConnectionEndDate: Date?
        var requestStartDate: Date?
        var requestEndDate: Date?
        var responseStartDate: Date?
        var responseEndDate: Date?
        var isReusedConnection = false
        var networkProtocolName: String? = "h2"
        var countOfRequestHeaderBytesSent: Int64 = 120
        var countOfRequestBodyBytesSent: Int64 = 0
        var countOfResponseHeaderBytesReceived: Int64 = 300
        var countOfResponseBodyBytesReceived: Int64 = 4096
    }

    struct Metrics: TaskMetricsReading {
        var transactionMetrics: [Transaction]
        var taskInterval: DateInterval
        var redirectCount: Int
    }

    /// A redirect hop, then the transaction that produced the response (times in ms from `start`).
    static func metrics() -> Metrics {
        let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
        func at(_ ms: Double) -> Date { start.addingTimeInterval(ms / 1000) }
        let hop = Transaction(fetchStartDate: at(0), networkProtocolName: "http/1.1")
        let last = Transaction(
            fetchStartDate: at(100), domainLookupStartDate: at(101), domainLookupEndDate: at(111),
            connectStartDate: at(111), connectEndDate: at(151), secureConnectionStartDate: at(121),
            secureConnectionEndDate: at(151), requestStartDate: at(152), requestEndDate: at(153),
            responseStartDate: at(203), responseEndDate: at(223))
        return Metrics(
            transactionMetrics: [hop, last], taskInterval: DateInterval(start: start, duration: 0.25), redirectCount: 1)
    }

    @Test("the last transaction's instants become phases; byte counts, protocol and redirects are kept")
    func mapsLastTransaction() throws {
        let timings = TaskTimings(Self.metrics())
        func ms(_ duration: Duration?) -> Int? {
            duration.map { Int(($0 / .milliseconds(1)).rounded()) }
        }
        #expect(ms(timings.domainLookup) == 10)
        #expect(ms(timings.connect) == 40)
        #expect(ms(timings.secureConnection) == 30)
        #expect(ms(timings.requestSend) == 1)
        #expect(ms(timings.waiting) == 50)
        #expect(ms(timings.timeToFirstByte) == 103)
        #expect(ms(timings.responseReceive) == 20)
        #expect(ms(timings.total) == 250)
        #expect(timings.networkProtocol == "h2")
        #expect(timings.isReusedConnection == false)
        #expect(timings.redirectCount == 1)
        #expect(timings.requestHeaderBytesSent == 120)
        #expect(timings.responseBodyBytesReceived == 4096)
    }

    @Test(
        "delivered metrics reach the call's context when the platform delivers them, and are ignored otherwise",
        arguments: [true, false])
    func reportsThroughRegistry(delivers: Bool) async throws {
        let capabilities = TransportFixtures.capabilities(.foundationNetworking) { $0.deliversTaskMetrics = delivers }
        let delegate = TransportSessionDelegate(capabilities: capabilities, serverTrust: NoServerTrustEvaluator())
        let context = RequestContext()
        let reporting = TransportReporter(progress: nil, timings: TaskTimingsReporter(context: context))
        TransportReporter.$bound.withValue(reporting) { delegate.register(7, pinning: nil) }
        delegate.reportMetrics(7, Self.metrics())
        if delivers {
            #expect(context.taskTimings == TaskTimings(Self.metrics()))
        } else {
            #expect(context.taskTimings == nil, "absent, not zero")
            #expect(delegate.taskOptions.current.isEmpty, "nothing is registered for metrics that never come")
        }
        delegate.complete(7, error: nil, response: nil)
        #expect(delegate.taskOptions.current.isEmpty)
    }
}
