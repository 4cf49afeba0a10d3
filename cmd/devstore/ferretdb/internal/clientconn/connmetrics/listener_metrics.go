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

package connmetrics

// ListenerMetrics represents listener metrics.
//
// seqd change: it holds only ConnMetrics, which serverStatus reads. The
// Prometheus counter of accepted connections and histogram of their lifetimes
// (Accepts, Durations), and Describe and Collect, are removed: the store
// exports no metrics.
type ListenerMetrics struct {
	ConnMetrics *ConnMetrics
}

// NewListenerMetrics creates new listener metrics.
func NewListenerMetrics() *ListenerMetrics {
	return &ListenerMetrics{
		ConnMetrics: newConnMetrics(),
	}
}
