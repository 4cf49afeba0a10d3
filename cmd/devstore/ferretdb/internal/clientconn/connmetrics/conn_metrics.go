// Copyright 2021 FerretDB Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// Package connmetrics provides listener and connection metrics.
package connmetrics

import "sync"

// ConnMetrics represents metrics of an individual conn or a collection of conns.
//
// seqd change: it counts responses in a map of its own, for serverStatus's
// metrics.commands, where it kept Prometheus counters (Requests, Responses,
// Describe and Collect), which the store does not export. GetResponses
// returns what it did.
type ConnMetrics struct {
	m         sync.Mutex
	responses map[responseLabels]int
}

// responseLabels are what a response is counted by.
type responseLabels struct {
	opcode, command, argument, result string
}

// commandMetrics represents command results metrics.
type commandMetrics struct {
	Failures map[string]int // count by error codes; no "ok" there
	Total    int            // both ok and errors
}

// newConnMetrics creates connection metrics.
func newConnMetrics() *ConnMetrics {
	return &ConnMetrics{
		responses: map[responseLabels]int{},
	}
}

// CountResponse counts one response (seqd change: see ConnMetrics).
func (cm *ConnMetrics) CountResponse(opcode, command, argument, result string) {
	cm.m.Lock()
	defer cm.m.Unlock()

	cm.responses[responseLabels{opcode, command, argument, result}]++
}

// GetResponses returns a map with all response metrics:
//
// opcode (e.g. "OP_MSG", "OP_QUERY") ->
// command (e.g. "find", "aggregate") ->
// argument that caused an error (e.g. "sort", "$count (stage)"; or "unknown") ->
// result (e.g. "NotImplemented", "InternalError"; or "ok") ->
// count.
func (cm *ConnMetrics) GetResponses() map[string]map[string]map[string]commandMetrics {
	cm.m.Lock()
	defer cm.m.Unlock()

	res := map[string]map[string]map[string]commandMetrics{}

	for labels, v := range cm.responses {
		opcode, command, argument, result := labels.opcode, labels.command, labels.argument, labels.result

		if _, ok := res[opcode]; !ok {
			res[opcode] = map[string]map[string]commandMetrics{}
		}

		if _, ok := res[opcode][command]; !ok {
			res[opcode][command] = map[string]commandMetrics{}
		}

		if _, ok := res[opcode][command][argument]; !ok {
			res[opcode][command][argument] = commandMetrics{}
		}

		m := res[opcode][command][argument]

		m.Total += v

		if result != "ok" {
			if m.Failures == nil {
				m.Failures = map[string]int{}
			}
			m.Failures[result] += v
		}

		res[opcode][command][argument] = m
	}

	return res
}
