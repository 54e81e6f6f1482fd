builtin.module {
  %x = pd.data "x" : tensor<4xf32>
  %y = pd.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %g = pd.backward targets(%y : tensor<4xf32>) wrt(%x : tensor<4xf32>) {
    %s = pd.relu %y : (tensor<4xf32>) -> tensor<5xf32>
  } -> (tensor<4xf32>)
}
