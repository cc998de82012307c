import Foundation

/// Reading and writing the textual date forms found in stores, fast enough for a million values.
///
/// Foundation's formatters cost microseconds a call; a load of a million Persist objects would spend
/// seconds in them, so the fixed forms below are read by hand:
/// `yyyy-MM-dd`, then optionally `T` or a space and `HH:mm[:ss[.fff…]]`, then optionally a zone:
/// `Z`, `±HH:mm`, `±HHmm` or `±HH`, directly or after one space (Persist writes
/// `2020-04-13 21:40:59 -04:00`). Text without a zone is read as UTC, as SQLite's date functions do.
public enum DateText {
    /// The date a text spells in one of the accepted forms, or nil.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// As ``parse(_:)``, on UTF-8 bytes.
    public static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Date? {
        let n = b.count
        guard n >= 10, n <= 40 else { return nil }
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= n else { return nil }
            var v = 0
            for i in at..<(at + count) {
                let c = b[i]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard let y = digits(0, 4), b[4] == 45, let mo = digits(5, 2), b[7] == 45, let d = digits(8, 2),
              (1...12).contains(mo), d >= 1, d <= daysInMonth(y, mo) else { return nil }
        var seconds = Double(daysFromCivil(y, mo, d)) * 86400
        var i = 10
        if i < n, b[i] == 84 || b[i] == 32, i + 3 < n, b[i + 3] == 58 {   // 'T' or ' ', then HH:
            guard let h = digits(i + 1, 2), let mi = digits(i + 4, 2), h < 24, mi < 60 else { return nil }
            seconds += Double(h * 3600 + mi * 60)
            i += 6
            if i < n, b[i] == 58 {
                guard let s = digits(i + 1, 2), s < 61 else { return nil }
                seconds += Double(s)
                i += 3
                if i < n, b[i] == 46 {   // fraction
                    i += 1
                    var scale = 0.1, frac = 0.0, any = false
                    while i < n, b[i] >= 48, b[i] <= 57 { frac += Double(b[i] - 48) * scale; scale /= 10; i += 1; any = true }
                    guard any else { return nil }
                    seconds += frac
                }
            }
        }
        if i < n, b[i] == 32 { i += 1 }
        if i < n {
            if b[i] == 90, i + 1 == n { i += 1 }   // Z
            else if b[i] == 43 || b[i] == 45 {
                let sign = b[i] == 45 ? -1 : 1
                guard let oh = digits(i + 1, 2) else { return nil }
                var om = 0
                i += 3
                if i < n, b[i] == 58 { guard let m = digits(i + 1, 2) else { return nil }; om = m; i += 3 }
                else if i + 2 == n, let m = digits(i, 2) { om = m; i += 2 }
                seconds -= Double(sign * (oh * 3600 + om * 60))
            } else { return nil }
        }
        // Within the years 1–9999 (`0000-02-01`, or a zone moving 0001-01-01 before it, is no
        // date Loupe can write back: it stays text).
        guard i == n, representableSeconds.contains(seconds) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// The number of days in a month of the proleptic Gregorian calendar (`2024-02-30` is no date).
    public static func daysInMonth(_ y: Int, _ m: Int) -> Int {
        switch m {
        case 2: return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Seconds since 1970 of 0001-01-01T00:00:00Z and of 10000-01-01T00:00:00Z: the dates Loupe
    /// shows as dates. A number outside them in a date column stays a number.
    public static let representableSeconds: Range<Double> = -62_135_596_800 ..< 253_402_300_800

    /// True for a date between the years 1 and 9999 (the ones ``iso(_:)`` can write).
    public static func isRepresentable(_ date: Date) -> Bool {
        representableSeconds.contains(date.timeIntervalSince1970)
    }

    /// `2024-01-31T10:20:30Z` (with milliseconds when the date has a fraction): how Loupe shows dates.
    /// A date outside the years 1–9999 (which no reader makes) is written as its seconds since 1970.
    public static func iso(_ date: Date) -> String {
        guard isRepresentable(date) else { return ValueFormatter.number(date.timeIntervalSince1970) }
        let (day, secs, millis) = split(date)
        let (y, m, d) = civilFromDays(day)
        return dateAndTime(y, m, d, secs, separator: "T", millis: millis != 0 ? millis : nil, tail: "Z")
    }

    /// `2024-01-31 10:20:30 Z`: the form Persist's DateFormatter writes (`yyyy-MM-dd HH:mm:ss ZZZZZ`), in UTC.
    public static func persist(_ date: Date) -> String {
        guard isRepresentable(date) else { return ValueFormatter.number(date.timeIntervalSince1970) }
        let (day, secs, _) = split(date)
        let (y, m, d) = civilFromDays(day)
        return dateAndTime(y, m, d, secs, separator: " ", tail: " Z")
    }

    /// `2020-04-13 21:40:59 -04:00`: Persist's form in a zone `offsetMinutes` east of UTC (`Z` at 0),
    /// as its DateFormatter writes on a device in that zone.
    public static func persist(_ date: Date, offsetMinutes: Int) -> String {
        guard offsetMinutes != 0 else { return persist(date) }
        let shifted = date.addingTimeInterval(Double(offsetMinutes) * 60)
        guard isRepresentable(shifted) else { return persist(date) }
        let (day, secs, _) = split(shifted)
        let (y, m, d) = civilFromDays(day)
        let sign = offsetMinutes < 0 ? "-" : "+"
        let magnitude = abs(offsetMinutes)
        return dateAndTime(y, m, d, secs, separator: " ", tail: " " + sign + zeroPadded(magnitude / 60, 2) + ":" + zeroPadded(magnitude % 60, 2))
    }

    /// `2024-01-31 10:20:30` (with `.fff` for a fraction), or `2024-01-31` when `dateOnly` and the
    /// time is midnight: the forms SQLite's date functions write, in UTC.
    public static func sqlite(_ date: Date, dateOnly: Bool) -> String {
        guard isRepresentable(date) else { return ValueFormatter.number(date.timeIntervalSince1970) }
        let (day, secs, millis) = split(date)
        let (y, m, d) = civilFromDays(day)
        if dateOnly && secs == 0 && millis == 0 { return zeroPadded(y, 4) + "-" + zeroPadded(m, 2) + "-" + zeroPadded(d, 2) }
        return dateAndTime(y, m, d, secs, separator: " ", millis: millis != 0 ? millis : nil)
    }

    /// `yyyy-MM-dd?HH:mm:ss` for a year 1–9999, then `.fff` when `millis` is given, then `tail`:
    /// written as bytes into one buffer (a load or a printed answer makes millions of them; joined
    /// strings and String(format:) are many times slower).
    private static func dateAndTime(_ y: Int, _ m: Int, _ d: Int, _ secs: Int, separator: Unicode.Scalar, millis: Int? = nil, tail: String = "") -> String {
        var tail = tail
        return tail.withUTF8 { tailBytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 23 + tailBytes.count) { buffer in
                var end = 0
                func put(_ n: Int, _ width: Int) {
                    var n = n
                    for k in stride(from: end + width - 1, through: end, by: -1) {
                        buffer[k] = UInt8(truncatingIfNeeded: 48 + n % 10)
                        n /= 10
                    }
                    end += width
                }
                func put(_ c: Unicode.Scalar) {
                    buffer[end] = UInt8(ascii: c)
                    end += 1
                }
                put(y, 4); put("-"); put(m, 2); put("-"); put(d, 2); put(separator)
                put(secs / 3600, 2); put(":"); put(secs / 60 % 60, 2); put(":"); put(secs % 60, 2)
                if let millis { put("."); put(millis, 3) }
                for b in tailBytes { buffer[end] = b; end += 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<end]), as: UTF8.self)
            }
        }
    }

    /// `n` in decimal with leading zeros to `width` digits (a sign first when negative).
    public static func zeroPadded(_ n: Int, _ width: Int) -> String {
        let digits = String(n.magnitude)
        let padding = digits.count < width ? String(repeating: "0", count: width - digits.count) : ""
        return (n < 0 ? "-" : "") + padding + digits
    }

    private static func split(_ date: Date) -> (day: Int, seconds: Int, millis: Int) {
        let t = date.timeIntervalSince1970
        let whole = floor(t)
        var millis = Int(((t - whole) * 1000).rounded())
        var total = Int(whole)
        if millis == 1000 { millis = 0; total += 1 }
        let day = Int(floor(Double(total) / 86400))
        return (day, total - day * 86400, millis)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    public static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// The proleptic Gregorian date of a day number since 1970-01-01.
    public static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// Seconds between 1970-01-01 and 2001-01-01 (Core Data's and PersistDB's reference date).
    public static let referenceDateOffset: Double = 978_307_200
}
