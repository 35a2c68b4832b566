module.exports = {
  displayName: 'devnet-node',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
