%x = pd.data "x" : tensor<3xf32>
pd.backward targets(%x : tensor<3xf32>) wrt() {
  %r = pd.relu %late {name = "r"} : (tensor<3xf32>) -> tensor<3xf32>
  pd.yield
} -> ()
%late = pd.tanh %x {name = "late"} : (tensor<3xf32>) -> tensor<3xf32>
pd.fetch %late : tensor<3xf32>
