-- The request mix of Examples/CatalogServer/loadtest for wrk: product ids drawn from a Zipf-like
-- distribution over the catalogue, the same sequence in every run. Settings come from the environment
-- (wrk passes no options to init in a portable way):
--   CATALOG_PATH      the path before the id: /products/ (the store), /direct/products/, /fixed/products/
--   CATALOG_PRODUCTS  how many products (ids 1...N), 10000 by default
--   CATALOG_ZIPF_S    the Zipf exponent, 1.1 by default: the k-th most requested id is asked for in
--                     proportion to 1/k^s
--   CATALOG_SEED      the random seed (each wrk thread adds its number), 20240515 by default
--   CATALOG_MIX       "products" (every request a GET of a product, the default), "sequential" (every id
--                     in turn, each thread from its own offset: the warm-up that caches the whole
--                     catalogue) or "mixed" (for the soak: 94% product GETs, 5% list pages, 1% writes)
--   CATALOG_STATUSES  "1" to count the answers' statuses per wall-clock second (costs a little speed)
-- done() prints one line, "WRK_JSON {...}": requests, duration, errors, latency percentiles (in
-- microseconds), the distinct ids requested and, with CATALOG_STATUSES, the statuses per second.

local threads = {}
local thread_count = 0

-- The number of precomputed requests each thread cycles through.
local ring_size = 65536

function setup(thread)
    thread_count = thread_count + 1
    thread:set("thread_number", thread_count)
    table.insert(threads, thread)
end

-- The ids 1...n ranked by popularity: a fixed permutation (7919 is prime, so it is one for any n it
-- does not divide), so that the most requested ids are spread over the catalogue rather than 1, 2, 3.
local function id_of_rank(rank, n)
    if n % 7919 == 0 then return rank end
    return ((rank - 1) * 7919) % n + 1
end

function init(args)
    local prefix = os.getenv("CATALOG_PATH") or "/products/"
    local n = tonumber(os.getenv("CATALOG_PRODUCTS") or "10000")
    local s = tonumber(os.getenv("CATALOG_ZIPF_S") or "1.1")
    local mix = os.getenv("CATALOG_MIX") or "products"
    local seed = tonumber(os.getenv("CATALOG_SEED") or "20240515") + (thread_number or 0)

    -- The cumulative distribution of the ranks.
    local cdf = {}
    local total = 0
    for k = 1, n do
        total = total + 1 / (k ^ s)
        cdf[k] = total
    end
    math.randomseed(seed)
    local function draw_id()
        local u = math.random() * total
        local lo, hi = 1, n
        while lo < hi do
            local mid = math.floor((lo + hi) / 2)
            if cdf[mid] >= u then hi = mid else lo = mid + 1 end
        end
        return id_of_rank(lo, n)
    end

    ring = {}
    ring_ids = {}
    local offset = ((thread_number or 1) - 1) * 4999
    for i = 1, ring_size do
        local id = draw_id()
        local roll = math.random()
        if mix == "sequential" then
            id = (offset + i - 1) % n + 1
            ring_ids[i] = id
            ring[i] = wrk.format("GET", prefix .. id)
        elseif mix == "mixed" and roll < 0.05 then
            -- A page of the list, after a cursor that is a multiple of 20.
            ring_ids[i] = 0
            ring[i] = wrk.format("GET", "/products?cursor=" .. (math.floor((id - 1) / 20) * 20))
        elseif mix == "mixed" and roll < 0.06 then
            ring_ids[i] = id
            local body = string.format(
                '{"id":%d,"name":"Soak %d","priceCents":%d,"description":"written by the soak","version":1}',
                id, i, 100 + i)
            ring[i] = wrk.format("PUT", prefix .. id, { ["Content-Type"] = "application/json" }, body)
        else
            ring_ids[i] = id
            ring[i] = wrk.format("GET", prefix .. id)
        end
    end
    next_index = 0
    issued = 0
    statuses = {}
end

function request()
    next_index = next_index % ring_size + 1
    issued = issued + 1
    return ring[next_index]
end

if os.getenv("CATALOG_STATUSES") == "1" then
    function response(status, headers, body)
        local key = os.time() .. ":" .. status
        statuses[key] = (statuses[key] or 0) + 1
    end
end

-- A minimal JSON encoder for numbers, strings and tables of them.
local function json(value)
    local kind = type(value)
    if kind == "number" then
        if value ~= value or value == math.huge or value == -math.huge then return "null" end
        return string.format("%.17g", value)
    elseif kind == "string" then
        return '"' .. value:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
    elseif kind == "table" then
        local parts = {}
        for k, v in pairs(value) do table.insert(parts, json(tostring(k)) .. ":" .. json(v)) end
        return "{" .. table.concat(parts, ",") .. "}"
    end
    return "null"
end

function done(summary, latency, requests)
    local seen = {}
    local distinct = 0
    local per_second = {}
    for _, thread in ipairs(threads) do
        local count = math.min(thread:get("issued") or 0, ring_size)
        local ids = thread:get("ring_ids") or {}
        for i = 1, count do
            local id = ids[i]
            if id and id > 0 and not seen[id] then
                seen[id] = true
                distinct = distinct + 1
            end
        end
        for key, n in pairs(thread:get("statuses") or {}) do
            local second, status = key:match("^(%d+):(%d+)$")
            per_second[second] = per_second[second] or {}
            per_second[second][status] = (per_second[second][status] or 0) + n
        end
    end
    local percentiles = {}
    for _, p in ipairs({ 50, 90, 99, 99.9 }) do
        percentiles[tostring(p)] = latency:percentile(p)
    end
    io.write("WRK_JSON " .. json({
        requests = summary.requests,
        duration_us = summary.duration,
        bytes = summary.bytes,
        errors = summary.errors,
        latency_us = {
            min = latency.min, max = latency.max, mean = latency.mean, percentiles = percentiles,
        },
        distinct_ids = distinct,
        statuses_per_second = per_second,
    }) .. "\n")
end
